package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ApiVersions: v0-4
//
// Behavior:
// * Lists every registered API key with the versions its handler
//   implements, sorted by key; the list is built from the registry, so it
//   never advertises a version the broker cannot serve.
// * A version outside v0-4 is not parsed: it is answered with the v0 encoding,
//   error UNSUPPORTED_VERSION and ApiKeys holding only ApiVersions' own
//   range, so the client retries at a version we serve (KIP-511; Kafka's
//   RequestContext.parseRequest and ApiVersionsRequest.getErrorResponse).
//   The response header is always v0, even for flexible versions.
// * v3+: ClientSoftwareName and ClientSoftwareVersion must match
//   [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?, else INVALID_REQUEST with
//   no ApiKeys (ApiVersionsRequest.isValid).
// * v3+: SupportedFeatures, FinalizedFeatures and FinalizedFeaturesEpoch
//   (features.go); a key a finalized feature level turns off is left out
//   (group.version 0: the KIP-848 consumer group APIs).
// * ThrottleMillis is always 0: ApiVersions is exempt from client quotas,
//   as in Kafka (client_quota_throttle.go).
//
// Version notes:
// * v1: ThrottleMillis
// * v2: no change (on quota violation the response is sent before throttling)
// * v3: flexible versions (KIP-482); ClientSoftwareName and
//   ClientSoftwareVersion (KIP-511); SupportedFeatures, FinalizedFeatures
//   and FinalizedFeaturesEpoch tagged fields (KIP-584)
// * v4: SupportedFeatures.MinVersion may be 0 (KAFKA-17011)

func init() {
	register(api{key: 18, throttleExempt: true, min: 0, max: 4, handle: (*Server).handleApiVersions})
}

func (s *Server) handleApiVersions(_ context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ApiVersionsRequest)
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	if req.Version >= 3 && (!validSoftwareNameVersion(req.ClientSoftwareName) || !validSoftwareNameVersion(req.ClientSoftwareVersion)) {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp, nil
	}
	resp.ApiKeys = s.advertisedKeys()
	s.setFeatures(resp)
	return resp, nil
}

// unsupportedApiVersions answers an ApiVersions request at a version above
// the registered range, in v0.
func (s *Server) unsupportedApiVersions() *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	if a, ok := s.apis.lookup(int16(kmsg.ApiVersions)); ok {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = a.key, a.min, a.max
		resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{k}
	}
	return resp
}

// validSoftwareNameVersion is ApiVersionsRequest's
// SOFTWARE_NAME_VERSION_PATTERN: alphanumeric at both ends, dashes and dots
// allowed inside.
func validSoftwareNameVersion(s string) bool {
	alnum := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	if s == "" || !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !alnum(c) && c != '-' && c != '.' {
			return false
		}
	}
	return true
}
