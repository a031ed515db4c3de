// What a consent card shows of an agent's strings (issue 14, C8, C10): js/honest_text.js.
import assert from "node:assert/strict";
import { test } from "node:test";

import { clip, describeUrl, fieldOrder, hasHidden, ownerOf, visible } from "../honest_text.js";

test("bidi controls are shown as their code point, so a path reads as it runs", () => {
  assert.equal(visible("reports/summary\u202Efdp.exe"), "reports/summary⟨U+202E⟩fdp.exe");
  for (const code of [0x202a, 0x202b, 0x202c, 0x202d, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c]) {
    assert.equal(
      visible(`a${String.fromCodePoint(code)}b`),
      `a⟨U+${code.toString(16).toUpperCase().padStart(4, "0")}⟩b`,
    );
  }
});

test("zero-width and other invisible characters are shown", () => {
  assert.equal(visible("pay\u200Bpal"), "pay⟨U+200B⟩pal");
  assert.equal(visible("a\u200C\u200D\u2060\uFEFF\u00ADb"), "a⟨U+200C⟩⟨U+200D⟩⟨U+2060⟩⟨U+FEFF⟩⟨U+00AD⟩b");
  assert.equal(visible("x\u3164y\u115Fz"), "x⟨U+3164⟩y⟨U+115F⟩z");
  assert.equal(visible("tag\u{E0041}"), "tag⟨U+E0041⟩"); // tag characters, outside the BMP
});

test("C0 and C1 controls are shown; line breaks stay only in multi-line text", () => {
  assert.equal(visible("a\u0000b\u0007c\u001Bd\u007Fe"), "a⟨U+0000⟩b⟨U+0007⟩c⟨U+001B⟩d⟨U+007F⟩e");
  assert.equal(visible("a\u0085b\u009Bc"), "a⟨U+0085⟩b⟨U+009B⟩c");
  assert.equal(visible("one\ntwo\tthree"), "one⟨U+000A⟩two⟨U+0009⟩three");
  assert.equal(visible("one\ntwo\tthree", { multiline: true }), "one\ntwo\tthree");
  assert.equal(visible("a\rb", { multiline: true }), "a⟨U+000D⟩b"); // a carriage return can overwrite a line
  assert.equal(visible("a\u2028b", { multiline: true }), "a⟨U+2028⟩b");
});

test("spaces that only look like a space are shown in one-line values", () => {
  assert.equal(visible("a\u00A0b\u2007c"), "a⟨U+00A0⟩b⟨U+2007⟩c");
  assert.equal(visible("a b"), "a b");
  assert.equal(visible("a\u00A0b", { multiline: true }), "a\u00A0b");
});

test("plain text, accents and emoji are left alone", () => {
  for (const text of ["reports/summary.pdf", "Zoë's café – ok", "日本語のテキスト", "👍🏽 done", "شكرا"]) {
    assert.equal(visible(text), text);
    assert.equal(hasHidden(text), false);
  }
  assert.equal(hasHidden("a\u202Eb"), true);
});

test("a homoglyph host is shown in punycode, as the browser sends it", () => {
  const url = describeUrl("https://g\u043E\u043Egle.com/", {});
  assert.ok(url);
  assert.equal(url.domain, "xn--ggle-55da.com");
  assert.equal(url.before, "https://");
  assert.equal(url.after, "/");
  assert.equal(url.punycode, true);
  assert.equal(url.href, "https://xn--ggle-55da.com/");
  assert.equal(describeUrl("https://google.com/", {})?.punycode, false);
});

test("the owner the kernel named is split out of the host (protocol/_owners.py)", () => {
  const url = describeUrl("https://accounts.google.com.evil.example/login?next=%2F#x", {
    "accounts.google.com.evil.example": "evil.example",
  });
  assert.ok(url);
  assert.deepEqual(
    [url.before, url.domain, url.after],
    ["https://accounts.google.com.", "evil.example", "/login?next=%2F#x"],
  );
  assert.equal(
    ownerOf("evil-corp.s3.amazonaws.com", { "evil-corp.s3.amazonaws.com": "evil-corp.s3.amazonaws.com" }),
    "evil-corp.s3.amazonaws.com",
  );
  assert.equal(describeUrl("https://x.example:8443/p", { "x.example": "x.example" })?.after, ":8443/p");
});

test("a host with no owner from the kernel, or a claimed owner that is not a parent, is shown whole", () => {
  assert.equal(ownerOf("evil-corp.s3.amazonaws.com", {}), "evil-corp.s3.amazonaws.com");
  assert.equal(ownerOf("evil.example", { "evil.example": "google.com" }), "evil.example");
  assert.equal(ownerOf("xevil.example", { "xevil.example": "evil.example" }), "xevil.example");
  assert.equal(ownerOf("__proto__", {}), "__proto__");
  const url = describeUrl("https://a.b.example.com/", {});
  assert.deepEqual([url?.before, url?.domain], ["https://", "a.b.example.com"]);
});

test("what the parser changes is what is shown: encoded path, lower-case host, no hidden text", () => {
  const url = describeUrl("HTTPS://Docs.Example.ORG/a b?q=\u200B", {});
  assert.ok(url);
  assert.equal(url.before + url.domain + url.after, "https://docs.example.org/a%20b?q=%E2%80%8B");
  assert.equal(describeUrl("not a url", {}), null);
});

test("long strings are cut at a code point, with the count left out", () => {
  const long = "x".repeat(112 * 1024);
  assert.deepEqual(clip(long, 400), { shown: "x".repeat(400), omitted: 112 * 1024 - 400 });
  assert.deepEqual(clip("short", 400), { shown: "short", omitted: 0 });
  assert.deepEqual(clip("😀😀😀", 2), { shown: "😀😀", omitted: 1 }); // never half a surrogate pair
});

test("the key field of a built-in comes first, the rest in the agent's order", () => {
  assert.deepEqual(fieldOrder("artifact.save", { content: "…", encoding: "utf-8", path: "a.txt" }), [
    "path",
    "encoding",
    "content",
  ]);
  assert.deepEqual(fieldOrder("app.open_url", { note: 1, url: "https://x.org" }), ["url", "note"]);
  assert.deepEqual(fieldOrder("clipboard.write", { text: "t" }), ["text"]);
  assert.deepEqual(fieldOrder("my.tool", { b: 1, a: 2 }), ["b", "a"]);
});
