package provider

import "slices"

// without are the elements of a not in b, in a's order.
func without[T comparable](a, b []T) []T {
	var out []T
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// union are the elements of a, then those of b not in a.
func union[T comparable](a, b []T) []T {
	return append(slices.Clone(a), without(b, a)...)
}
