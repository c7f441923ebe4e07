package chat

import (
	"context"
	"regexp"
	"testing"
	"time"
)

// TestStrftime: expected strings are Python's datetime.strftime (glibc).
func TestStrftime(t *testing.T) {
	t1 := time.Date(2024, 3, 7, 9, 5, 3, 123456000, time.UTC)
	t2 := time.Date(2025, 12, 31, 23, 59, 0, 0, time.UTC)
	cases := []struct {
		at           time.Time
		format, want string
	}{
		{t1, "%a %A %b %h %B", "Thu Thursday Mar Mar March"},
		{t1, "%d %e %m %y %Y", "07  7 03 24 2024"},
		{t1, "%H %I %M %S %p %j %f", "09 09 05 03 AM 067 123456"},
		{t1, "%w %u %F %T %D %R", "4 4 2024-03-07 09:05:03 03/07/24 09:05"},
		{t1, "%c", "Thu Mar  7 09:05:03 2024"},
		{t1, "%x %X", "03/07/24 09:05:03"},
		{t1, "%-d %-m %-H %-I %-M %-S %-j", "7 3 9 9 5 3 67"},
		{t1, "%U %W %V %G %g %C", "09 10 10 2024 24 20"},
		{t1, "%% %q 100%", "% %q 100%"},
		{t1, "%d %b %Y", "07 Mar 2024"}, // Llama 3.2
		{t1, "%B %d, %Y", "March 07, 2024"},
		{t2, "%I %p %j %U %W %V %G %u %w", "11 PM 365 52 52 01 2026 3 3"},
		{t2, "%-I", "11"},
		{t1, "%-e|%-y|%-a", "7|24|Thu"},
	}
	for _, c := range cases {
		if got := strftime(c.at, c.format); got != c.want {
			t.Errorf("strftime(%s, %q) = %q, want %q", c.at, c.format, got, c.want)
		}
	}
}

func TestStrftimeNow(t *testing.T) {
	tpl, err := Compile(`{{ strftime_now("%Y-%m-%d") }}`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tpl.Render(context.Background(), Input{})
	if err != nil || !regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`).MatchString(got) {
		t.Fatalf("got %q, %v", got, err)
	}
	for _, src := range []string{`{{ strftime_now() }}`, `{{ strftime_now(1) }}`} {
		tpl, err := Compile(src)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tpl.Render(context.Background(), Input{}); err == nil {
			t.Errorf("%s: want an error", src)
		}
	}
}
