package chat

import (
	"fmt"
	"strings"
	"time"

	"github.com/helexa/helexa/internal/jinja/exec"
)

// strftimeNow is transformers' strftime_now(fmt): the time now() returns
// (the current local time outside tests) formatted with Python's strftime
// directives.
func strftimeNow(now func() time.Time) func(va *exec.VarArgs) (string, error) {
	return func(va *exec.VarArgs) (string, error) {
		if len(va.Args) != 1 || !va.Args[0].IsString() {
			return "", fmt.Errorf("strftime_now() takes one string argument")
		}
		return strftime(now(), va.Args[0].String()), nil
	}
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
		if format[i] == '-' && i+1 < len(format) { // glibc: no padding
			i++
			b.WriteString(unpadded(directive(t, format[i])))
			continue
		}
		b.WriteString(directive(t, format[i]))
	}
	return b.String()
}

// unpadded drops the zero or space padding of a numeric field.
func unpadded(s string) string {
	if s == "" || !(s[0] == ' ' || s[0] >= '0' && s[0] <= '9') {
		return s
	}
	if t := strings.TrimLeft(s, "0 "); t != "" {
		return t
	}
	return "0"
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
	case 'u':
		return fmt.Sprintf("%d", (int(t.Weekday())+6)%7+1)
	case 'U', 'W':
		return fmt.Sprintf("%02d", weekOfYear(t, c == 'W'))
	case 'V':
		_, w := t.ISOWeek()
		return fmt.Sprintf("%02d", w)
	case 'G':
		y, _ := t.ISOWeek()
		return fmt.Sprintf("%d", y)
	case 'g':
		y, _ := t.ISOWeek()
		return fmt.Sprintf("%02d", y%100)
	case 'C':
		return fmt.Sprintf("%02d", t.Year()/100)
	case 'F':
		return t.Format("2006-01-02")
	case 'T', 'X':
		return t.Format("15:04:05")
	case 'D', 'x':
		return t.Format("01/02/06")
	case 'R':
		return t.Format("15:04")
	case 'c':
		return t.Format("Mon Jan _2 15:04:05 2006")
	case '%':
		return "%"
	}
	return "%" + string(c)
}

// weekOfYear is %U (weeks start on Sunday) or %W (on Monday): days before
// the year's first such day are in week 0.
func weekOfYear(t time.Time, monday bool) int {
	wd := int(t.Weekday())
	if monday {
		wd = (wd + 6) % 7
	}
	return (t.YearDay() + 6 - wd) / 7
}
