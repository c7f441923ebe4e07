package chat

import (
	"fmt"
	"strings"
	"time"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// strftimeNow is transformers' strftime_now(fmt): the current local time
// formatted with Python's strftime directives.
func strftimeNow(va *exec.VarArgs) (string, error) {
	if len(va.Args) != 1 || !va.Args[0].IsString() {
		return "", fmt.Errorf("strftime_now() takes one string argument")
	}
	return strftime(time.Now(), va.Args[0].String()), nil
}

// strftime formats t with the C/Python directives templates use.
func strftime(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 == len(format) {
			b.WriteByte(format[i])
			continue
		}
		i++
		b.WriteString(directive(t, format[i]))
	}
	return b.String()
}

func directive(t time.Time, c byte) string {
	switch c {
	case 'a':
		return t.Format("Mon")
	case 'A':
		return t.Format("Monday")
	case 'b', 'h':
		return t.Format("Jan")
	case 'B':
		return t.Format("January")
	case 'd':
		return t.Format("02")
	case 'e':
		return fmt.Sprintf("%2d", t.Day())
	case 'm':
		return t.Format("01")
	case 'y':
		return t.Format("06")
	case 'Y':
		return fmt.Sprintf("%d", t.Year())
	case 'H':
		return t.Format("15")
	case 'I':
		return t.Format("03")
	case 'M':
		return t.Format("04")
	case 'S':
		return t.Format("05")
	case 'p':
		return t.Format("PM")
	case 'j':
		return fmt.Sprintf("%03d", t.YearDay())
	case 'f':
		return fmt.Sprintf("%06d", t.Nanosecond()/1000)
	case 'z':
		return t.Format("-0700")
	case 'Z':
		return t.Format("MST")
	case 'w':
		return fmt.Sprintf("%d", int(t.Weekday()))
	case 'F':
		return t.Format("2006-01-02")
	case 'T':
		return t.Format("15:04:05")
	case '%':
		return "%"
	}
	return "%" + string(c)
}
