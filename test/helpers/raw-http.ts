/**
 * HTTP/1.1 over a bare socket, for requests `fetch` will not send as written: a percent-encoded or
 * absolute-form target, a missing Host, repeated headers, a body shorter than its Content-Length.
 */
import net from 'node:net';

export interface RawResponse {
  /** 0 when the connection closed without a status line. */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything received, as text. */
  raw: string;
}

/** Parses the first response in `raw` (headers and whatever followed them). */
export function parseResponse(raw: string): RawResponse {
  const end = raw.indexOf('\r\n\r\n');
  const head = end === -1 ? raw : raw.slice(0, end);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status, headers, body: end === -1 ? '' : raw.slice(end + 4), raw };
}

/**
 * Writes `request` as it is and reads one response: up to the end of its Content-Length body, the
 * end of its head for a 101, or else until the server closes the connection or `timeoutMs` passes.
 */
export function rawRequest(url: string, request: string | Buffer, timeoutMs = 5000): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(Number(port), hostname.replace(/^\[|\]$/g, ''), () => socket.write(request));
    const finish = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(parseResponse(Buffer.concat(chunks).toString('utf8')));
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      const received = parseResponse(Buffer.concat(chunks).toString('utf8'));
      if (!received.raw.includes('\r\n\r\n')) return;
      const length = received.headers['content-length'];
      if (received.status === 101 || (length !== undefined && Buffer.byteLength(received.body) >= Number(length))) finish();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // A reset after the answer arrived still leaves the answer to read.
      if (chunks.length === 0 && error.code !== 'ECONNRESET') reject(error);
    });
    socket.on('close', finish);
  });
}

/** A request with `Connection: close`, a Host and the given extra header lines. */
export function requestText(method: string, target: string, headers: string[] = [], body = ''): string {
  const lines = [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...headers];
  if (body !== '' || method === 'POST') lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}
