package remoting

// Get returns the value of the last entry with key, the one a Java HashMap
// would keep when a frame repeats a key (docs/PROTOCOL.md §1.4).
func (e ExtFields) Get(key string) (string, bool) {
	for i := len(e) - 1; i >= 0; i-- {
		if e[i].Key == key {
			return e[i].Value, true
		}
	}
	return "", false
}

// Has reports whether key is present.
func (e ExtFields) Has(key string) bool {
	_, ok := e.Get(key)
	return ok
}

// Set replaces the value of every entry with key, or appends a new entry.
// Replacing in place keeps the encoded order stable.
func (e *ExtFields) Set(key, value string) {
	found := false
	for i := range *e {
		if (*e)[i].Key == key {
			(*e)[i].Value = value
			found = true
		}
	}
	if !found {
		*e = append(*e, Field{Key: key, Value: value})
	}
}

// Add appends an entry without looking for an existing one. Typed headers
// use it to build a fresh ExtFields cheaply.
func (e *ExtFields) Add(key, value string) {
	*e = append(*e, Field{Key: key, Value: value})
}

// Del removes every entry with key, keeping the order of the others.
func (e *ExtFields) Del(key string) {
	s := *e
	j := 0
	for _, f := range s {
		if f.Key != key {
			s[j] = f
			j++
		}
	}
	clear(s[j:])
	if s != nil {
		*e = s[:j]
	}
}

// Map returns the fields as a map (last entry wins). A nil ExtFields gives a
// nil map.
func (e ExtFields) Map() map[string]string {
	if e == nil {
		return nil
	}
	m := make(map[string]string, len(e))
	for _, f := range e {
		m[f.Key] = f.Value
	}
	return m
}

// Clone returns a copy that shares no slice memory with e (strings are
// immutable and shared). A nil ExtFields stays nil.
func (e ExtFields) Clone() ExtFields {
	if e == nil {
		return nil
	}
	c := make(ExtFields, len(e))
	copy(c, e)
	return c
}

// Dedup returns the fields with each key once, at the position of its first
// occurrence and with its last value: the map a Java peer would build, in a
// stable order. It returns e itself when no key repeats.
func (e ExtFields) Dedup() ExtFields {
	dup := false
	for i := 1; i < len(e) && !dup; i++ {
		for j := 0; j < i; j++ {
			if e[i].Key == e[j].Key {
				dup = true
				break
			}
		}
	}
	if !dup {
		return e
	}
	out := make(ExtFields, 0, len(e))
	for _, f := range e {
		seen := false
		for i := range out {
			if out[i].Key == f.Key {
				out[i].Value = f.Value
				seen = true
				break
			}
		}
		if !seen {
			out = append(out, f)
		}
	}
	return out
}
