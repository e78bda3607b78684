"""driver.py runs one kafka-python scenario for broker/e2e's
TestKafkaPythonAgainstACluster and prints its results as JSON lines on
standard output; the Go test judges them. Usage:

  python3 driver.py cluster BROKERS
  python3 driver.py group BROKERS TOPIC GROUP PARTITIONS N
  python3 driver.py acked BROKERS TOPIC PARTITIONS N KILL_AT

BROKERS is host:port,host:port,... Record i has key k%06d and value v%06d,
as the Go ledger names them. kafka-python is a pure-Python client with its
own protocol code (Debian's python3-kafka, 2.0.2): it picks request versions
from the broker version it infers, older ones than the other clients use.
"""
import json
import logging
import sys
import threading
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer

# kafka-python logs every refused reconnect to a killed broker at ERROR.
logging.basicConfig(level=logging.CRITICAL)


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def key(i):
    return b"k%06d" % i


def value(i):
    return b"v%06d" % i


def cluster(brokers):
    """Prints the brokers and controller the cluster describes, in the
    shape kafkajs's describeCluster gives them."""
    admin = KafkaAdminClient(bootstrap_servers=brokers)
    c = admin.describe_cluster()
    admin.close()
    emit({"brokers": [{"nodeId": b["node_id"], "host": b["host"], "port": b["port"]} for b in c["brokers"]],
          "controller": c["controller_id"]})


def group(brokers, topic, group_id, partitions, n):
    """Starts a two-member consumer group and, once the members hold every
    partition between them, produces n records with acks=all, every other
    send gzip-compressed and every record with a header. It reports what
    each member read; closing a member commits what it read."""
    seen = {}
    bad = [0]
    members = [set(), set()]
    lock = threading.Lock()
    stop = threading.Event()
    consumers = [
        KafkaConsumer(topic, bootstrap_servers=brokers, group_id=group_id,
                      auto_offset_reset="earliest", enable_auto_commit=False,
                      session_timeout_ms=10000, heartbeat_interval_ms=500)
        for _ in range(2)
    ]

    def run(m):
        c = consumers[m]
        while not stop.is_set():
            for tp, msgs in c.poll(200).items():
                with lock:
                    for msg in msgs:
                        j = int(msg.value[1:])
                        if msg.key != key(j) or msg.headers != [("i", str(j).encode())]:
                            bad[0] += 1
                        seen[msg.value] = seen.get(msg.value, 0) + 1
                        members[m].add(tp.partition)
            try:
                c.commit()
            except Exception:  # a rebalance under way; the next poll commits
                pass

    threads = [threading.Thread(target=run, args=(m,), daemon=True) for m in range(2)]
    for t in threads:
        t.start()
    # The records go in once the members split the partitions: a member
    # that joined late would find them all read.
    deadline = time.time() + 60
    while True:
        held = [{tp.partition for tp in c.assignment()} for c in consumers]
        if held[0] and held[1] and not held[0] & held[1] and len(held[0] | held[1]) == partitions:
            break
        if time.time() > deadline:
            raise TimeoutError("the two members did not split the partitions: %s" % held)
        time.sleep(0.1)

    plain = KafkaProducer(bootstrap_servers=brokers, acks="all", retries=30)
    gzip = KafkaProducer(bootstrap_servers=brokers, acks="all", retries=30, compression_type="gzip")
    for s, i in enumerate(range(0, n, 100)):
        p = gzip if s % 2 else plain
        futures = [p.send(topic, key=key(j), value=value(j), headers=[("i", str(j).encode())])
                   for j in range(i, min(i + 100, n))]
        p.flush()
        for f in futures:
            f.get(0)
    plain.close()
    gzip.close()

    deadline = time.time() + 60
    while time.time() < deadline:
        with lock:
            if len(seen) == n:
                break
        time.sleep(0.1)
    stop.set()
    for t in threads:
        t.join()
    for c in consumers:
        c.close()
    emit({"distinct": len(seen), "deliveries": sum(seen.values()), "bad": bad[0],
          "members": [sorted(m) for m in members]})


def acked(brokers, topic, partitions, n, kill_at):
    """Produces n records with acks=all, 100 to one partition per send, and
    prints every acknowledgement with the offset the broker gave. Before
    record kill_at it asks the test to kill a broker and waits for a line
    on standard input.

    kafka-python has no idempotent producer. Each send is flushed before
    the next, so nothing is in flight when the broker dies: a record can
    only be written twice if a live broker takes longer than the request
    timeout to answer, and the test counts duplicates as a failure."""
    producer = KafkaProducer(bootstrap_servers=brokers, acks="all", retries=1000,
                             max_in_flight_requests_per_connection=1,
                             retry_backoff_ms=100, metadata_max_age_ms=5000)
    for s, i in enumerate(range(0, n, 100)):
        if i == kill_at:
            emit({"event": "kill"})
            sys.stdin.readline()
        partition = s % partitions
        sent = [(j, producer.send(topic, key=key(j), value=value(j), partition=partition))
                for j in range(i, min(i + 100, n))]
        producer.flush()
        for j, f in sent:
            try:
                md = f.get(0)
                emit({"first": j, "count": 1, "partition": md.partition, "baseOffset": md.offset})
            except Exception as e:  # the test reports every failed send
                emit({"first": j, "count": 1, "error": "%s: %s" % (type(e).__name__, e)})
    producer.close()
    emit({"event": "done"})


def main():
    cmd, brokers, args = sys.argv[1], sys.argv[2].split(","), sys.argv[3:]
    if cmd == "cluster":
        cluster(brokers)
    elif cmd == "group":
        group(brokers, args[0], args[1], int(args[2]), int(args[3]))
    elif cmd == "acked":
        acked(brokers, args[0], int(args[1]), int(args[2]), int(args[3]))
    else:
        sys.exit("driver.py: unknown command %s" % cmd)


if __name__ == "__main__":
    main()
