/**
 * Credential redaction for anything that may reach a log line or an error message. A connection URL carries
 * the database password, so every message built from a URL or from a driver error passes through here.
 */

const URL_CREDENTIALS = /([a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:)[^@\s]*@/gi;

/** The URL with its password replaced by `***` (user, host, port and database stay: they help diagnose). */
export function redactUrl(url: string): string {
  return url.replace(URL_CREDENTIALS, '$1***@');
}

/** Every secret the URL carries: its raw and its percent-decoded password. */
export function secretsOf(url: string): string[] {
  const match = /^[a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:([^@\s]*)@/i.exec(url);
  const raw = match?.[1] ?? '';
  if (!raw) return [];
  let decoded = raw;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    // Malformed percent-encoding: the raw form is the only one that can appear.
  }
  return [...new Set([raw, decoded])];
}

/** The text with URL credentials and each given secret replaced by `***`. */
export function redactText(text: string, secrets: readonly string[] = []): string {
  let out = text.replace(URL_CREDENTIALS, '$1***@');
  // Longest first, so a secret that contains another is removed whole.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret.length > 0) out = out.split(secret).join('***');
  }
  return out;
}
