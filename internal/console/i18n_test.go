package console

import (
	"io/fs"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestChineseComplete: every text the templates and handlers translate
// has its Chinese.
func TestChineseComplete(t *testing.T) {
	names, err := fs.Glob(assets, "assets/*.html")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	check := func(where, key string) {
		n++
		if _, ok := zh[key]; !ok {
			t.Errorf("%s: no Chinese for %q", where, key)
		}
	}
	for _, name := range names {
		b, _ := assets.ReadFile(name)
		for _, m := range regexp.MustCompile(`\$\.T "((?:[^"\\]|\\.)*)"`).FindAllStringSubmatch(string(b), -1) {
			check(name, strings.ReplaceAll(m[1], `\"`, `"`))
		}
	}
	gofiles, _ := fs.Glob(os.DirFS("."), "*.go")
	for _, name := range gofiles {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		b, _ := os.ReadFile(name)
		for _, m := range regexp.MustCompile(`v\.T\("((?:[^"\\]|\\.)*)"\)`).FindAllStringSubmatch(string(b), -1) {
			check(name, m[1])
		}
	}
	for _, k := range []string{"All", "Normal", "Retry", "Dead letter", "System", "Consumer groups", "System groups", "normal", "retry", "dlq", "system", "user"} {
		check("kinds", k)
	}
	if n < 150 {
		t.Fatalf("only %d texts found to check", n)
	}
}

func TestAcceptLang(t *testing.T) {
	for h, want := range map[string]string{
		"": "en", "zh-CN,zh;q=0.9,en;q=0.8": "zh", "en-US,en;q=0.9,zh;q=0.8": "en", "fr,zh-TW;q=0.5": "zh",
		"de": "en", "en;q=0.2, zh;q=0.7": "zh", "zh;q=bad, en;q=0.5": "zh",
	} {
		if got := acceptLang(h); got != want {
			t.Errorf("acceptLang(%q) = %q, want %q", h, got, want)
		}
	}
}

// TestLanguage: a browser preferring Chinese gets Chinese pages; the
// switch turns them English and the choice sticks in a cookie.
func TestLanguage(t *testing.T) {
	e := start(t)
	get := func(path, accept string) page {
		t.Helper()
		req, _ := http.NewRequest("GET", e.http.URL+path, nil)
		if accept != "" {
			req.Header.Set("Accept-Language", accept)
		}
		resp, err := e.cli.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return readPage(t, resp)
	}
	p := get("/topics", "zh-CN,zh;q=0.9")
	if !strings.Contains(p.body, `<html lang="zh-CN">`) || !strings.Contains(p.body, ">主题</a>") || !strings.Contains(p.body, "创建 / 更新") {
		t.Fatalf("Chinese page:\n%s", p.body)
	}
	if !strings.Contains(p.body, `id="lang-en" href="/topics?lang=en"`) {
		t.Error("no switch to English")
	}
	p = get("/topics?lang=en", "zh-CN")
	if !strings.Contains(p.body, `<html lang="en">`) || !strings.Contains(p.body, "Create / update") {
		t.Fatal("the switch did not turn the page English")
	}
	if p := get("/groups", "zh-CN"); !strings.Contains(p.body, `<html lang="en">`) {
		t.Error("the English choice did not stick")
	}
	if p := get("/groups/NoSuchGroup?lang=zh", ""); !strings.Contains(p.body, "消费组") || p.status != http.StatusNotFound {
		t.Errorf("Chinese 404 page: %d", p.status)
	}
}
