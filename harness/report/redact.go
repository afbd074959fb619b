package report

import (
	"bytes"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Redactor removes secrets (the values of environment variables a spec's
// templates read with {{.Env "NAME"}}) from everything onceproof writes:
// one redaction, applied to the report before any format, reproducer or
// certificate is written ([Redactor.Report]) and to the command's output
// streams ([Redactor.Writer]). A secret's value becomes "[redacted NAME]".
// The zero value redacts nothing until secrets are added; it is safe for
// concurrent use.
type Redactor struct {
	mu      sync.RWMutex
	secrets []secret // longest value first
}

type secret struct{ value, with string }

// Add adds the secret of variable name; an empty value is no secret.
func (r *Redactor) Add(name, value string) {
	if value == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.secrets {
		if s.value == value {
			return
		}
	}
	r.secrets = append(r.secrets, secret{value: value, with: "[redacted " + name + "]"})
	slices.SortFunc(r.secrets, func(a, b secret) int { return len(b.value) - len(a.value) })
}

// String is s without any secret.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, sec := range r.secrets {
		if strings.Contains(s, sec.value) {
			s = strings.ReplaceAll(s, sec.value, sec.with)
		}
	}
	return s
}

// Bytes is b without any secret (b itself when it has none).
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil {
		return b
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, sec := range r.secrets {
		if bytes.Contains(b, []byte(sec.value)) {
			b = bytes.ReplaceAll(b, []byte(sec.value), []byte(sec.with))
		}
	}
	return b
}

// Report redacts every string of rep in place: attempts, requests,
// responses, errors, counterexamples, lint findings, server logs.
func (r *Redactor) Report(rep *Report) {
	if r == nil || rep == nil {
		return
	}
	r.walk(reflect.ValueOf(rep).Elem())
}

func (r *Redactor) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			if s := r.String(v.String()); s != v.String() {
				v.SetString(s)
			}
		}
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return
		}
		e := v.Elem()
		if v.Kind() == reflect.Interface {
			// A value in an interface cannot be set in place: copy it.
			c := reflect.New(e.Type()).Elem()
			c.Set(e)
			r.walk(c)
			if v.CanSet() {
				v.Set(c)
			}
			return
		}
		r.walk(e)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				r.walk(v.Field(i))
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if v.CanSet() && !v.IsNil() {
				v.SetBytes(r.Bytes(v.Bytes()))
			}
			return
		}
		for i := range v.Len() {
			r.walk(v.Index(i))
		}
	case reflect.Array:
		for i := range v.Len() {
			r.walk(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		iter := v.MapRange()
		type kv struct{ k, v reflect.Value }
		var entries []kv
		for iter.Next() {
			k := reflect.New(iter.Key().Type()).Elem()
			k.Set(iter.Key())
			e := reflect.New(iter.Value().Type()).Elem()
			e.Set(iter.Value())
			entries = append(entries, kv{k, e})
		}
		for _, en := range entries {
			v.SetMapIndex(en.k, reflect.Value{})
			r.walk(en.k)
			r.walk(en.v)
			v.SetMapIndex(en.k, en.v)
		}
	}
}

// Writer returns w with every secret removed from what is written to it;
// writes from several goroutines go to w one at a time.
func (r *Redactor) Writer(w io.Writer) io.Writer { return &redactingWriter{r: r, w: w} }

type redactingWriter struct {
	r  *Redactor
	mu sync.Mutex
	w  io.Writer
}

// Unwrap is the writer written to (whether it is a terminal).
func (w *redactingWriter) Unwrap() io.Writer { return w.w }

// Write writes p without secrets; it reports len(p) written when all of
// the redacted text was.
func (w *redactingWriter) Write(p []byte) (int, error) {
	q := w.r.Bytes(p)
	w.mu.Lock()
	n, err := w.w.Write(q)
	w.mu.Unlock()
	if err == nil && n == len(q) {
		return len(p), nil
	}
	return min(n, len(p)), err
}
