package harness

import "strconv"

// Plural spells a count with its noun: "1 check", "2 checks", "0 checks".
func Plural(n int, singular, plural string) string {
	if n == 1 || n == -1 {
		return strconv.Itoa(n) + " " + singular
	}
	return strconv.Itoa(n) + " " + plural
}
