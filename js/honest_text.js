// What the user reads in a consent card is what runs (issue 14, C8, C10). Pure functions, no
// DOM: agent strings made visible, URLs shown as the browser will open them, long values cut.
//
// - Control, format, bidi and invisible characters become `⟨U+XXXX⟩`: a path
//   `summary\u202Efdp.exe` must not read as `summary"exe.pdf`, a zero-width space must not
//   hide in a name. Line breaks and tabs stay in multi-line text (a reason, a file's content)
//   and are marked in one-line values (a path, a URL, a name).
// - A URL is parsed as the browser parses it (the WHATWG parser: `new URL`), and its host is
//   shown as the parser gives it: in punycode (`xn--...`) when it is not plain ASCII, so a
//   Cyrillic `о` cannot pass for a Latin `o`. The registrable domain (who owns the host) is
//   marked out as the kernel says (protocol/_owners.py, by the Public Suffix List: the
//   card's `owners`); a host the kernel named no owner for is marked whole, never guessed.

/** Characters that are shown as their code point wherever they are. */
// biome-ignore lint/suspicious/noMisleadingCharacterClass: U+034F (combining grapheme joiner) is one of the invisible characters matched alone, on purpose
const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Zl}\p{Zp}\u034F\u115F\u1160\u17B4\u17B5\u3164\uFFA0]/u;
/** In one-line values also spaces other than U+0020, which look like one and are not. */
const ODD_SPACE = /[\p{Zs}]/u;

/**
 * The text with every hidden character shown as `⟨U+XXXX⟩`.
 * @param {string} text
 * @param {{ multiline?: boolean }} [options] keep line breaks and tabs (in a reason, a content)
 */
export function visible(text, options = {}) {
  let out = "";
  for (const char of String(text)) {
    const keep = options.multiline === true && (char === "\n" || char === "\t");
    const odd = !options.multiline && char !== " " && ODD_SPACE.test(char);
    if (!keep && (HIDDEN.test(char) || odd)) {
      const code = /** @type {number} */ (char.codePointAt(0));
      out += `⟨U+${code.toString(16).toUpperCase().padStart(4, "0")}⟩`;
    } else {
      out += char;
    }
  }
  return out;
}

/** Did `visible` change anything? @param {string} text @param {{ multiline?: boolean }} [options] */
export function hasHidden(text, options = {}) {
  return visible(text, options) !== String(text);
}

/**
 * Who owns a host name, as the kernel said (`owners`: host -> registrable domain). An owner
 * that is not the host or a parent of it is ignored: the whole host is shown then.
 * @param {string} hostname as `new URL().hostname` gives it (lower case, punycode)
 * @param {Record<string, string>} owners
 */
export function ownerOf(hostname, owners) {
  const owner = Object.hasOwn(owners, hostname) ? owners[hostname] : undefined;
  return owner && (owner === hostname || hostname.endsWith(`.${owner}`)) ? owner : hostname;
}

/**
 * A URL as the browser will open it, in three parts: what comes before the registrable
 * domain (scheme, subdomains), the registrable domain itself, and the rest (port, path,
 * query, fragment). Each part is already `visible`. `null` when the browser cannot parse it.
 * @param {string} text
 * @param {Record<string, string>} owners the card's, from the kernel (`ownerOf`)
 * @returns {{ before: string, domain: string, after: string, href: string,
 *   punycode: boolean } | null}
 */
export function describeUrl(text, owners) {
  /** @type {URL} */
  let url;
  try {
    url = new URL(String(text));
  } catch {
    return null;
  }
  const host = url.hostname;
  const domain = ownerOf(host, owners);
  const subdomains = host.slice(0, host.length - domain.length);
  const credentials = url.username || url.password ? `${url.username}${url.password ? `:${url.password}` : ""}@` : "";
  const port = url.port ? `:${url.port}` : "";
  return {
    before: visible(`${url.protocol}//${credentials}${subdomains}`),
    domain: visible(domain),
    after: visible(`${port}${url.pathname}${url.search}${url.hash}`),
    href: url.href,
    punycode: host.split(".").some((label) => label.startsWith("xn--")),
  };
}

/**
 * The first `limit` characters (code points, never half a pair) and how many were left out.
 * @param {string} text @param {number} limit
 */
export function clip(text, limit) {
  const chars = Array.from(String(text));
  if (chars.length <= limit) return { shown: chars.join(""), omitted: 0 };
  return { shown: chars.slice(0, limit).join(""), omitted: chars.length - limit };
}

/** The argument each built-in capability is about, shown first (docs/capabilities.md). */
export const KEY_FIELDS = /** @type {Record<string, string[]>} */ ({
  "artifact.save": ["path", "encoding"],
  "app.open_url": ["url"],
  "clipboard.write": ["text"],
  "device.pick_file": ["accept"],
});

/**
 * The argument names in the order a card shows them: the capability's key fields first, then
 * the others in the agent's order.
 * @param {string} capability @param {Record<string, unknown>} args
 */
export function fieldOrder(capability, args) {
  const names = Object.keys(args);
  const first = (KEY_FIELDS[capability] ?? []).filter((name) => names.includes(name));
  return [...first, ...names.filter((name) => !first.includes(name))];
}
