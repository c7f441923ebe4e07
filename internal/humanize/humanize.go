// Package humanize formats byte sizes and large counts for people (CLI
// tables, the chat UI's /show info).
package humanize

import (
	"fmt"
	"strconv"
)

// Bytes formats n as B, KiB, MiB, GiB, TiB, PiB or EiB with one decimal;
// a negative n (unknown size) gives "size unknown".
func Bytes(n int64) string {
	if n < 0 {
		return "size unknown"
	}
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// Count formats a count such as a parameter count: 1.50B, 494.03M, 12.3K.
func Count(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1fK", float64(n)/1e3)
	}
	return strconv.FormatInt(n, 10)
}
