package replay

import (
	"fmt"
	"testing"
)

func TestCache(t *testing.T) {
	c := New(3)
	k := func(i int) Key { return Key{Vehicle: "PIU-001", Epoch: "e1", Seq: uint64(i)} }
	a, b := Sum([]byte("a")), Sum([]byte("b"))
	if seen, conflict := c.Check(k(1), a); seen || conflict {
		t.Fatal("new key seen")
	}
	if seen, conflict := c.Check(k(1), a); !seen || conflict {
		t.Fatal("a redelivery is not a conflict")
	}
	if seen, conflict := c.Check(k(1), b); !seen || !conflict {
		t.Fatal("changed content not a conflict")
	}
	if _, conflict := c.Check(k(1), a); conflict {
		t.Fatal("the first digest must be kept")
	}
	for i := 2; i <= 4; i++ { // evicts k(1)
		c.Check(k(i), a)
	}
	if seen, _ := c.Check(k(1), b); seen {
		t.Fatal("the oldest key was not evicted")
	}
	if len(c.m) != 3 {
		t.Fatalf("%d keys held, want 3", len(c.m))
	}
	c.Forget(k(4))
	if seen, _ := c.Check(k(4), b); seen {
		t.Fatal("a forgotten key is still seen")
	}
}

func BenchmarkCheck(b *testing.B) {
	c := New(DefaultSize)
	d := Sum([]byte("payload"))
	for i := 0; b.Loop(); i++ {
		c.Check(Key{Vehicle: fmt.Sprint("V-", i%2000), Epoch: "e1", Seq: uint64(i)}, d)
	}
}
