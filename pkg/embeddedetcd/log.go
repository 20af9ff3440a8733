package embeddedetcd

import (
	"errors"
	"net"
	"net/http"
	"sort"
	"sync/atomic"

	"github.com/soheilhy/cmux"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc"
	"k8s.io/klog/v2"
)

// newZapLogger returns a zap logger for etcd that writes through klog, so that etcd's lines look like the
// server's own and follow its -v. etcd's info lines are V(2), debug V(4); warnings are plain info lines, as
// klog has no warning level. Once stopping is set, the errors of etcd's listeners closing on purpose, which
// etcd reports as failures with stack traces, are V(2) info lines.
func newZapLogger(logger klog.Logger, stopping *atomic.Bool) *zap.Logger {
	return zap.New(&klogCore{logger: logger, stopping: stopping})
}

type klogCore struct {
	logger   klog.Logger
	stopping *atomic.Bool
	fields   []zapcore.Field
}

var _ zapcore.Core = &klogCore{}

func (c *klogCore) Enabled(level zapcore.Level) bool {
	switch {
	case level >= zapcore.WarnLevel:
		return true
	case level == zapcore.InfoLevel:
		return c.logger.V(2).Enabled()
	default:
		return c.logger.V(4).Enabled()
	}
}

func (c *klogCore) With(fields []zapcore.Field) zapcore.Core {
	clone := *c
	clone.fields = append(append([]zapcore.Field(nil), c.fields...), fields...)
	return &clone
}

func (c *klogCore) Check(entry zapcore.Entry, checked *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(entry.Level) {
		return checked.AddCore(entry, c)
	}
	return checked
}

func (c *klogCore) Write(entry zapcore.Entry, fields []zapcore.Field) error {
	logger := c.logger
	if entry.LoggerName != "" {
		logger = logger.WithName(entry.LoggerName)
	}
	var err error
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range append(append([]zapcore.Field(nil), c.fields...), fields...) {
		if e, ok := f.Interface.(error); ok && f.Type == zapcore.ErrorType && f.Key == "error" {
			err = e
			continue
		}
		f.AddTo(enc)
	}
	keys := make([]string, 0, len(enc.Fields))
	for k := range enc.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	kvs := make([]any, 0, 2*len(keys)+2) // room for the error
	for _, k := range keys {
		kvs = append(kvs, k, enc.Fields[k])
	}

	quiet := c.stopping.Load() && closedOnPurpose(err)
	if entry.Level >= zapcore.ErrorLevel && !quiet {
		logger.Error(err, entry.Message, kvs...)
		return nil
	}
	if err != nil {
		kvs = append(kvs, "err", err)
	}
	switch {
	case entry.Level >= zapcore.WarnLevel && !quiet:
		logger.Info(entry.Message, kvs...)
	case entry.Level >= zapcore.InfoLevel:
		logger.V(2).Info(entry.Message, kvs...)
	default:
		logger.V(4).Info(entry.Message, kvs...)
	}
	return nil
}

func (c *klogCore) Sync() error { return nil }

// closedOnPurpose tells the errors that etcd's servers return once their listener is closed: the mux that
// shares the socket between gRPC and HTTP, the gRPC server, the HTTP server, or the listener itself.
func closedOnPurpose(err error) bool {
	for _, closed := range []error{cmux.ErrServerClosed, cmux.ErrListenerClosed, grpc.ErrServerStopped, http.ErrServerClosed, net.ErrClosed} {
		if errors.Is(err, closed) {
			return true
		}
	}
	return false
}
