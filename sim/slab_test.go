package sim

import (
	"reflect"
	"testing"
)

// Freed slots are reused last-freed first; the table grows only when none is free.
func TestAllocReusesFreedSlots(t *testing.T) {
	var items []string
	var free []int32
	for _, s := range []string{"a", "b", "c"} {
		Alloc(&items, &free, s)
	}
	free = append(free, 0, 2)
	if i := Alloc(&items, &free, "d"); i != 2 {
		t.Errorf("first reuse took slot %d, want 2 (freed last)", i)
	}
	if i := Alloc(&items, &free, "e"); i != 0 {
		t.Errorf("second reuse took slot %d, want 0", i)
	}
	if i := Alloc(&items, &free, "f"); i != 3 {
		t.Errorf("with nothing free got slot %d, want a new one, 3", i)
	}
	if want := []string{"e", "b", "d", "f"}; !reflect.DeepEqual(items, want) {
		t.Errorf("items %v, want %v", items, want)
	}
}
