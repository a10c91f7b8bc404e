/** Where the page keeps the bearer: session storage (this tab only), never a cookie, a query string or local storage. */
export const TOKEN_KEY = 'apphost.token';

/**
 * Reads `#token=<bearer>` from a URL fragment (the link `npm start` prints): the token, and the fragment without it,
 * so the page can drop it from the address bar and history at once. Fragments never reach a server or a Referer.
 */
export function takeTokenFromHash(hash: string): { token: string | undefined; rest: string } {
  const params = new URLSearchParams(hash.startsWith('#') ? hash.slice(1) : hash);
  const token = params.get('token') ?? undefined;
  params.delete('token');
  const rest = params.toString();
  return { token: token && token.trim() ? token.trim() : undefined, rest: rest ? `#${rest}` : '' };
}
