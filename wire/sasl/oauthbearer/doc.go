// Package oauthbearer is the OAUTHBEARER SASL mechanism (RFC 7628) with the
// validation Kafka's OAuthBearerValidatorCallbackHandler does (KIP-768): the
// client presents a JWT access token, signed by its identity provider, and
// the broker checks the signature against the provider's JSON Web Key Set
// (JWKS) and the token's claims against sasl.oauthbearer.*.
//
// The pieces, each in its own file:
//   - message.go: the client's initial response, the GS2 header and the
//     \x01-separated key=value pairs of RFC 7628 section 3.1, parsed as
//     strictly as Kafka's OAuthBearerClientInitialResponse;
//   - mechanism.go: the exchange of Kafka's OAuthBearerSaslServer, including
//     the RFC 7628 error reply ({"status":"invalid_token"}) that the client
//     acknowledges with a single \x01 before the server fails;
//   - jws.go, jwk.go, claims.go, validator.go: Kafka's
//     ValidatorAccessTokenValidator (which uses jose4j) in the standard
//     library: JWS compact serialization (RFC 7515), RSA and EC keys of a JWKS
//     (RFC 7517/7518), the JWT claims (RFC 7519);
//   - keysource.go: the JWKS, read at start and refreshed every
//     sasl.oauthbearer.jwks.endpoint.refresh.ms and soon after a token names a
//     key id it does not hold (Kafka's RefreshingHttpsJwks);
//   - config.go: the broker keys to a validated Config.
//
// Where Strait departs from Kafka, on purpose:
//   - Kafka's default server callback handler for OAUTHBEARER is the
//     *unsecured* one (OAuthBearerUnsecuredValidatorCallbackHandler), which
//     accepts unsigned tokens ("alg":"none") and is meant for development
//     only. Strait has no such mode: a listener that enables OAUTHBEARER must
//     name OAuthBearerValidatorCallbackHandler in
//     listener.name.<listener>.oauthbearer.sasl.server.callback.handler.class,
//     and Config refuses to start otherwise, saying why. A broker that
//     silently accepted anyone's unsigned claim to be anyone would be worse
//     than one that does not start.
//   - Only asymmetric algorithms are accepted (RS256/384/512, PS256/384/512,
//     ES256/384/512): the broker holds no shared secret, so a token signed
//     with HMAC ("HS256") could only verify against a public key used as an
//     HMAC secret, the classic algorithm-confusion attack. "none" is refused,
//     as jose4j's DISALLOW_NONE does for Kafka.
//   - A file: JWKS is re-read like an http(s) one (Kafka reads the file once):
//     rotating a key in the file needs no broker restart.
//   - The authorization id of the GS2 header is compared with the token's
//     principal after decoding its =2C and =3D escapes (RFC 5801); Kafka
//     compares the raw text. The two agree for every name without ',' or '='.
//   - A client that answers the error reply with anything but \x01 fails the
//     exchange (RFC 7628 section 3.2.3); Kafka starts a new exchange.
//   - TLS options for an https JWKS endpoint in the JAAS entry (Kafka's
//     JaasOptionsUtils ssl.*) are not supported: the system's trusted roots
//     verify the endpoint, and a JAAS entry with ssl.* options is refused.
//
// Kept as Kafka does, though it may surprise: iat is required (jose4j's
// setRequireIssuedAt); a token that carries aud is refused when no
// sasl.oauthbearer.expected.audience is configured (jose4j's default audience
// check); a string scope claim is one scope, not split at spaces; the client
// learns only {"status":"invalid_token"}, while the reason is logged.
package oauthbearer
