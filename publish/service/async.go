package service

import (
	"fmt"
	"sync"
)

// goValue runs f on another goroutine; the channel yields its result (or
// the recovered panic as an error).
func goValue[T any](f func() (T, error)) chan result[T] {
	ch := make(chan result[T], 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				ch <- result[T]{err: fmt.Errorf("internal error (recovered): %v", r)}
			}
		}()
		v, err := f()
		ch <- result[T]{v, err}
	}()
	return ch
}

type result[T any] struct {
	v   T
	err error
}

// goWait runs f on another goroutine; the returned func waits for it once,
// logs its error and returns it.
func goWait(log *Log, f func() error) func() error {
	ch := goValue(func() (struct{}, error) { return struct{}{}, f() })
	return sync.OnceValue(func() error {
		o := <-ch
		if o.err != nil {
			log.Printf("publish: %v", o.err)
		}
		return o.err
	})
}
