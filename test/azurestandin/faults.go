package azurestandin

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// fault makes the server answer requests of a method under a path prefix as an unhealthy or busy
// Azure would.
type fault struct {
	method     string
	pathPrefix string
	status     int           // 0 hangs
	retryAfter time.Duration // for 429
	remaining  int           // answers left; negative for no limit
	until      time.Time     // zero for no end
}

// Throttle answers the next times requests of method (any, if empty) whose path starts with
// pathPrefix (whatever its case) with 429 TooManyRequests and Retry-After, as ARM's throttling does.
func (s *Server) Throttle(method, pathPrefix string, times int, retryAfter time.Duration) {
	s.addFault(&fault{method: method, pathPrefix: pathPrefix, status: http.StatusTooManyRequests, retryAfter: retryAfter, remaining: times})
}

// Unavailable answers matching requests with 503 ServiceUnavailable for the duration.
func (s *Server) Unavailable(method, pathPrefix string, d time.Duration) {
	s.addFault(&fault{method: method, pathPrefix: pathPrefix, status: http.StatusServiceUnavailable, remaining: -1, until: time.Now().Add(d)})
}

// UnavailableTimes answers the next times matching requests with 503 ServiceUnavailable.
func (s *Server) UnavailableTimes(method, pathPrefix string, times int) {
	s.addFault(&fault{method: method, pathPrefix: pathPrefix, status: http.StatusServiceUnavailable, remaining: times})
}

// Hang leaves the next times matching requests unanswered until their context ends (the client
// gives up) or the server closes.
func (s *Server) Hang(method, pathPrefix string, times int) {
	s.addFault(&fault{method: method, pathPrefix: pathPrefix, remaining: times})
}

func (s *Server) addFault(f *fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f)
}

// injectFault answers the request as the first fault that matches it, and reports whether one did.
func (s *Server) injectFault(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	var f *fault
	now := time.Now()
	for _, c := range s.faults {
		if (c.method != "" && c.method != r.Method) || !strings.HasPrefix(strings.ToLower(r.URL.Path), strings.ToLower(c.pathPrefix)) {
			continue
		}
		if c.remaining == 0 || (!c.until.IsZero() && now.After(c.until)) {
			continue
		}
		if c.remaining > 0 {
			c.remaining--
		}
		f = c
		break
	}
	var status int
	var retryAfter time.Duration
	if f != nil {
		status, retryAfter = f.status, f.retryAfter
	}
	s.mu.Unlock()
	switch {
	case f == nil:
		return false
	case status == 0:
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
	case status == http.StatusTooManyRequests:
		seconds := int(math.Ceil(retryAfter.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(seconds))
		writeError(w, status, "TooManyRequests", "", fmt.Sprintf("The request is being throttled. Retry after %d seconds.", seconds))
	default:
		writeError(w, status, "ServiceUnavailable", "", "The service is temporarily unavailable. Please try again later.")
	}
	return true
}
