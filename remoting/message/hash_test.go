package message

import (
	"slices"
	"testing"
	"unicode/utf16"
)

func TestTagHashJavaVectors(t *testing.T) {
	var v struct {
		Cases []struct {
			Tag         *string `json:"tag"`
			UTF8Hex     string  `json:"utf8Hex"`
			UTF16Length int     `json:"utf16Length"`
			UTF16       []int   `json:"utf16"`
			HashCode    int32   `json:"hashCode"`
			TagsCode    int64   `json:"tagsCode"`
		} `json:"cases"`
		Subscriptions struct {
			Cases []struct {
				SubString       string   `json:"subString"`
				ResultSubString string   `json:"resultSubString"`
				TagsSet         []string `json:"tagsSet"`
				CodeSet         []int32  `json:"codeSet"`
			} `json:"cases"`
		} `json:"subscriptions"`
	}
	loadVectors(t, "tagsCode", &v)
	if len(v.Cases) < 40 || len(v.Subscriptions.Cases) < 8 {
		t.Fatalf("%d cases, %d subscriptions", len(v.Cases), len(v.Subscriptions.Cases))
	}
	for i, c := range v.Cases {
		if c.Tag == nil { // Java null: Go has only "", which the next case covers
			if c.TagsCode != 0 || TagHash("") != 0 {
				t.Errorf("null tag: tagsCode %d", c.TagsCode)
			}
			continue
		}
		tag := *c.Tag
		t.Run(string(rune('a'+i%26))+"/"+tag[:min(len(tag), 20)], func(t *testing.T) {
			if string(mustHex(t, c.UTF8Hex)) != tag {
				t.Fatal("vector inconsistent")
			}
			units := utf16.Encode([]rune(tag))
			if len(units) != c.UTF16Length {
				t.Errorf("UTF-16 length %d, want %d", len(units), c.UTF16Length)
			}
			if c.UTF16 != nil {
				for j, u := range units {
					if int(u) != c.UTF16[j] {
						t.Errorf("unit %d = %d, want %d", j, u, c.UTF16[j])
					}
				}
			}
			if h := JavaHashCode(tag); h != c.HashCode {
				t.Errorf("JavaHashCode = %d, want %d", h, c.HashCode)
			}
			if h := TagHash(tag); h != c.TagsCode {
				t.Errorf("TagHash = %d, want %d", h, c.TagsCode)
			}
		})
	}
	for _, c := range v.Subscriptions.Cases {
		t.Run("subscription/"+c.SubString, func(t *testing.T) {
			s := BuildSubscription(c.SubString)
			if s.Expression != c.ResultSubString {
				t.Errorf("expression %q, want %q", s.Expression, c.ResultSubString)
			}
			// Java sets are shown sorted; ours keep expression order.
			tags, codes := slices.Clone(s.Tags), slices.Clone(s.Codes)
			slices.Sort(tags)
			slices.Sort(codes)
			if !slices.Equal(tags, c.TagsSet) || !slices.Equal(codes, c.CodeSet) {
				t.Errorf("tags %q codes %v, want %q %v", s.Tags, s.Codes, c.TagsSet, c.CodeSet)
			}
			for i, tag := range s.Tags {
				if s.Codes[i] != JavaHashCode(tag) || !s.HasCode(TagHash(tag)) || !s.Matches(tag) {
					t.Errorf("tag %q: code %d", tag, s.Codes[i])
				}
			}
			if (c.ResultSubString == "*") != s.MatchAll() {
				t.Errorf("MatchAll %v", s.MatchAll())
			}
		})
	}
}

func TestSubscriptionMatching(t *testing.T) {
	all := BuildSubscription("*")
	if !all.Matches("") || !all.Matches("x") {
		t.Error("* must match everything")
	}
	ab := BuildSubscription("TagA || TagB")
	if !slices.Equal(ab.Tags, []string{"TagA", "TagB"}) {
		t.Fatalf("tags %q", ab.Tags)
	}
	if ab.Matches("") || ab.Matches("TagC") || !ab.Matches("TagB") || ab.HasCode(0) || !ab.HasCode(2598919) {
		t.Error("TagA || TagB matching")
	}
	none := BuildSubscription("||")
	if none.MatchAll() || none.Matches("x") || len(none.Tags) != 0 {
		t.Errorf("|| is not *: %+v", none)
	}
}

func TestJavaHashCodeInvalidUTF8(t *testing.T) {
	// Java decodes a stray byte as U+FFFD.
	if got, want := JavaHashCode("a\xffb"), JavaHashCode("a\uFFFDb"); got != want {
		t.Errorf("invalid UTF-8: %d, want %d", got, want)
	}
}
