/** Credential redaction: a Redis URL may carry a password, and it must never reach a message or a log. */

const URL_CREDENTIALS = /([a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:)[^@\s]*@/gi;

/** The URL with its password replaced by `***`; user, host and port stay because they help diagnose. */
export function redactUrl(url: string): string {
  return url.replace(URL_CREDENTIALS, '$1***@');
}

/** The password a URL carries, raw and percent-decoded (either form may show up in a driver message). */
export function secretsOf(url: string): string[] {
  const raw = /^[a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:([^@\s]*)@/i.exec(url)?.[1] ?? '';
  if (!raw) return [];
  let decoded = raw;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    // Malformed percent-encoding: only the raw form can appear.
  }
  return [...new Set([raw, decoded])];
}

/** The text with URL credentials and each given secret replaced by `***`. */
export function redactText(text: string, secrets: readonly string[]): string {
  let out = text.replace(URL_CREDENTIALS, '$1***@');
  // Longest first, so a secret containing another is removed whole.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret) out = out.split(secret).join('***');
  }
  return out;
}
