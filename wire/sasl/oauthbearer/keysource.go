package oauthbearer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/strait-io/strait/storage/clock"
)

const (
	// maxJWKSBytes bounds a JWKS document; real ones are a few KiB.
	maxJWKSBytes = 4 << 20
	// jwksHTTPTimeout bounds one fetch of an http(s) JWKS.
	jwksHTTPTimeout = 10 * time.Second
	// missingKidInterval is how often one unknown kid may make the JWKS be
	// read again (Kafka's RefreshingHttpsJwks.MISSING_KEY_ID_CACHE_IN_FLIGHT_MS).
	missingKidInterval = 60 * time.Second
	// missingKidGap is the least time between two reads caused by unknown
	// kids, whatever the kids: Kafka's per-kid limit alone lets a client
	// that invents a new kid for every token make the broker fetch the
	// JWKS for each.
	missingKidGap = 5 * time.Second
	// missingKidsKept bounds the unknown kids remembered
	// (MISSING_KEY_ID_CACHE_MAX_ENTRIES) and maxKidLen the length of one
	// (MISSING_KEY_ID_MAX_KEY_LENGTH): a longer kid never causes a read.
	missingKidsKept = 16
	maxKidLen       = 1000
	// minRetryBackoff is the least wait between two attempts of a refresh.
	minRetryBackoff = 10 * time.Millisecond
)

// keySource holds the keys of a JWKS and keeps them current (Kafka's
// RefreshingHttpsJwks): read at start, then every refresh interval, and
// soon after a token names a key it does not hold. A read that fails keeps
// the last good keys.
type keySource struct {
	location        string
	load            func(context.Context) ([]byte, error)
	refreshEvery    time.Duration
	retryBackoff    time.Duration
	retryBackoffMax time.Duration
	log             *slog.Logger
	clock           clock.Clock

	mu            sync.Mutex
	keys          []verificationKey
	missingKids   map[string]time.Time // kid -> when it may cause a read again
	lastExpedited time.Time

	kick     chan struct{}
	ctx      context.Context
	cancel   context.CancelFunc
	done     chan struct{}
	stopOnce sync.Once
}

// startKeySource reads the JWKS of cfg and starts refreshing it. A JWKS
// that cannot be read or parsed now is an error naming the config key.
func startKeySource(cfg Config, log *slog.Logger, clk clock.Clock) (*keySource, error) {
	load, err := jwksLoader(cfg.JWKSURL)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w", keyJWKSURL, cfg.JWKSURL, err)
	}
	if cfg.JWKSRefresh <= 0 {
		return nil, fmt.Errorf("%s must be positive", keyJWKSRefresh)
	}
	s := &keySource{
		location:        cfg.JWKSURL,
		load:            load,
		refreshEvery:    cfg.JWKSRefresh,
		retryBackoff:    cfg.JWKSRetryBackoff,
		retryBackoffMax: cfg.JWKSRetryBackoffMax,
		log:             log,
		clock:           clk,
		missingKids:     map[string]time.Time{},
		kick:            make(chan struct{}, 1),
		done:            make(chan struct{}),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	keys, err := s.read()
	if err != nil {
		s.cancel()
		return nil, fmt.Errorf("%s=%s: cannot read the JWKS: %w", keyJWKSURL, cfg.JWKSURL, err)
	}
	s.keys = keys
	log.Info("OAUTHBEARER JWKS read", "location", s.location, "keys", len(keys), "refresh", s.refreshEvery)
	if len(keys) == 0 {
		log.Warn("OAUTHBEARER JWKS holds no key the broker can use: every token is refused until it does", "location", s.location)
	}
	go s.run()
	return s, nil
}

// jwksLoader returns how to read the JWKS at location: a file: URL is read
// from disk, an http(s) one fetched.
func jwksLoader(location string) (func(context.Context) ([]byte, error), error) {
	u, err := url.Parse(location)
	if err != nil {
		return nil, fmt.Errorf("not a URL: %v", err)
	}
	switch u.Scheme {
	case "file":
		if u.Path == "" || u.Opaque != "" || (u.Host != "" && u.Host != "localhost") {
			return nil, errors.New(`a file URL must name an absolute path, as file:/path or file:///path`)
		}
		path := u.Path
		return func(context.Context) ([]byte, error) { return readFileLimited(path) }, nil
	case "http", "https":
		client := &http.Client{Timeout: jwksHTTPTimeout}
		return func(ctx context.Context) ([]byte, error) { return fetchLimited(ctx, client, location) }, nil
	}
	return nil, fmt.Errorf("the scheme %q is not http, https or file", u.Scheme)
}

func readFileLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f)
}

func fetchLimited(ctx context.Context, client *http.Client, location string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, location, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP status %s", resp.Status)
	}
	return readLimited(resp.Body)
}

func readLimited(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxJWKSBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxJWKSBytes {
		return nil, fmt.Errorf("the JWKS is larger than %d bytes", maxJWKSBytes)
	}
	return b, nil
}

// read loads and parses the JWKS once.
func (s *keySource) read() ([]verificationKey, error) {
	doc, err := s.load(s.ctx)
	if err != nil {
		return nil, err
	}
	keys, skipped, err := parseJWKS(doc)
	if err != nil {
		return nil, err
	}
	for _, why := range skipped {
		s.log.Warn("OAUTHBEARER JWKS key ignored", "location", s.location, "reason", why)
	}
	return keys, nil
}

func (s *keySource) run() {
	defer close(s.done)
	t := time.NewTicker(s.refreshEvery)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		case <-s.kick:
		}
		s.refresh()
	}
}

// refresh reads the JWKS, retrying with exponential backoff from
// retryBackoff for at most retryBackoffMax in all (Kafka's Retry), and
// keeps the last good keys if every attempt fails.
func (s *keySource) refresh() {
	deadline := time.Now().Add(s.retryBackoffMax)
	// A floor under the first wait: with retry.backoff.ms=0 Kafka's Retry
	// would fetch in a tight loop for the whole retry.backoff.max.ms.
	wait := max(s.retryBackoff, minRetryBackoff)
	for {
		keys, err := s.read()
		if err == nil {
			s.mu.Lock()
			s.keys = keys
			for _, k := range keys {
				delete(s.missingKids, k.kid)
			}
			s.mu.Unlock()
			s.log.Debug("OAUTHBEARER JWKS refreshed", "location", s.location, "keys", len(keys))
			return
		}
		left := time.Until(deadline)
		if left <= 0 || s.ctx.Err() != nil {
			s.log.Warn("OAUTHBEARER JWKS refresh failed; keeping the last keys read", "location", s.location, "err", err)
			return
		}
		select {
		case <-s.ctx.Done():
			return
		case <-time.After(min(wait, left)):
		}
		wait *= 2
	}
}

func (s *keySource) keysWithID(kid string) []verificationKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	if kid == "" {
		return s.keys
	}
	var out []verificationKey
	for _, k := range s.keys {
		if k.kid == kid {
			out = append(out, k)
		}
	}
	return out
}

func (s *keySource) missing(kid string) {
	if len(kid) > maxKidLen {
		return
	}
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if next, ok := s.missingKids[kid]; ok && now.Before(next) {
		return
	}
	if !s.lastExpedited.IsZero() && now.Sub(s.lastExpedited) < missingKidGap {
		return
	}
	if len(s.missingKids) >= missingKidsKept {
		s.forgetOldestMissing()
	}
	s.missingKids[kid] = now.Add(missingKidInterval)
	s.lastExpedited = now
	s.log.Info("OAUTHBEARER JWKS has no key for a token's kid; reading it again", "location", s.location, "kid", kid)
	select {
	case s.kick <- struct{}{}:
	default: // a read is already due
	}
}

func (s *keySource) forgetOldestMissing() {
	var oldest string
	var at time.Time
	for kid, next := range s.missingKids {
		if at.IsZero() || next.Before(at) {
			oldest, at = kid, next
		}
	}
	delete(s.missingKids, oldest)
}

// stop ends refreshing and waits for the refresher to return.
func (s *keySource) stop() {
	s.stopOnce.Do(func() {
		s.cancel()
		<-s.done
	})
}
