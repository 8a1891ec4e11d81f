package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Stream is a success answer written while it is produced (an export's CSV, docs/exports.md):
// respond sets ContentType and Header and runs Write, which writes the body to w as it goes.
// Nothing reaches the client before Write's first write to w, so an error Write returns before it
// is answered as the JSON error envelope, like every error. After it the status and headers are
// sent and an error cuts the answer off: the connection closes without the chunked body's last
// chunk (HTTP/2: the stream is reset), which HTTP clients report as an incomplete body. Only read
// operations may return it.
type Stream struct {
	ContentType string
	Header      http.Header
	Write       func(ctx context.Context, w io.Writer) error
}

// streamStall is how long a streamed answer waits for the client to take one write before it gives
// up (the write fails, which ends the work behind it). The server's WriteTimeout does not bound a
// stream: each write moves the deadline on.
const streamStall = time.Minute

// errClientGone marks a write the client did not take: it went away, or stopped reading.
var errClientGone = errors.New("the client did not take the answer")

// stream writes a Stream answer (see Stream).
func (s *Server) stream(w http.ResponseWriter, hr *http.Request, o *operation, st Stream) {
	out := &streamWriter{w: w, rc: http.NewResponseController(w), start: func() {
		h := w.Header()
		for k, v := range st.Header {
			h[k] = v
		}
		h.Set("Content-Type", st.ContentType)
		w.WriteHeader(o.success)
	}}
	// The request has been read: the server's ReadTimeout would otherwise end the request's context
	// while the answer is still being written. Without a read deadline the connection's read still
	// ends it as soon as the client closes the connection.
	_ = out.rc.SetReadDeadline(time.Time{})
	err := st.Write(hr.Context(), out)
	switch {
	case err == nil:
	case !out.started:
		s.writeError(w, hr, err)
	default:
		if hr.Context().Err() == nil && !errors.Is(err, errClientGone) {
			s.log.Error("streamed answer cut off", "requestId", RequestID(hr.Context()), "err", err.Error())
			s.metrics.storeError(err)
		}
		panic(http.ErrAbortHandler) // no last chunk: the client sees the body is incomplete
	}
}

// streamWriter sends the status and headers before its first write, gives each write streamStall
// to be taken, and flushes it to the client.
type streamWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	start   func()
	started bool
}

func (sw *streamWriter) Write(p []byte) (int, error) {
	if !sw.started {
		sw.started = true
		sw.start()
	}
	_ = sw.rc.SetWriteDeadline(time.Now().Add(streamStall))
	n, err := sw.w.Write(p)
	if err == nil {
		err = sw.rc.Flush()
	}
	if err != nil {
		return n, fmt.Errorf("%w: %v", errClientGone, err)
	}
	return n, nil
}
