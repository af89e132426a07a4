/**
 * Credentials out of URLs before they reach a log, a message or the screen. A password may itself
 * hold `@` or `/`, so the userinfo runs to the last `@` before the query or fragment.
 */

/** The URL without credentials, for logs and messages. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^?#]*@/i, '$1***@');
}

/** `text` with the credentials of every URL in it redacted, for error messages that quote a URL. */
export function redactUrlsIn(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s?#]*@/gi, '$1***@');
}
