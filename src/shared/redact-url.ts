/**
 * Credentials out of URLs before they reach a log, a message or the screen. A password may itself
 * hold `@` or `/`, and people type `#` and `?` into passwords without percent-encoding them (which
 * a URL parser then takes for a fragment or a query), so the userinfo runs to the last `@`. A query
 * or fragment holding an `@` is redacted along with it: showing too little beats showing a password.
 * The query and fragment go too: brokers reached over WebSocket may take a pre-signed URL whose
 * query is the credential (AWS IoT's `X-Amz-Signature`, Azure's SAS tokens).
 */

/** The URL without credentials, for logs and messages. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/).*@/is, '$1***@').replace(/([?#])[^]*$/, '$1***');
}

/** `text` with the credentials of every URL in it redacted, for error messages that quote a URL. */
export function redactUrlsIn(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)\S*@/gi, '$1***@').replace(/([a-z][a-z0-9+.-]*:\/\/[^\s?#"']*)([?#])[^\s"']*/gi, '$1$2***');
}
