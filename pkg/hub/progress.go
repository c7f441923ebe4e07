package hub

// EventKind says what a progress Event reports.
type EventKind string

// The events, in the order a file sees them: start, progress…, verify, done
// (or cached when nothing had to be downloaded).
const (
	EventNotice   EventKind = "notice"   // a message for the user (e.g. which quant was picked)
	EventStart    EventKind = "start"    // a download begins; Total is the size, Bytes what a partial file already had
	EventProgress EventKind = "progress" // Bytes of Total are on disk
	EventVerify   EventKind = "verify"   // the whole file is on disk; its hash is being checked
	EventDone     EventKind = "done"     // the file is in the cache
	EventCached   EventKind = "cached"   // the file was already in the cache (or a blob was reused)
)

// Event is one progress report. It is a plain value: cmd renders it as a
// progress bar, a log line or a JSON object.
type Event struct {
	Kind    EventKind `json:"event"`
	Repo    string    `json:"repo,omitempty"`
	File    string    `json:"file,omitempty"`
	Bytes   int64     `json:"bytes,omitempty"`
	Total   int64     `json:"total,omitempty"`
	Message string    `json:"message,omitempty"`
}

// ProgressFunc receives events. Calls are serialized.
type ProgressFunc func(Event)

func (c *Client) emit(e Event) {
	if c.opts.Progress != nil {
		c.emitMu.Lock()
		defer c.emitMu.Unlock()
		c.opts.Progress(e)
	}
}
