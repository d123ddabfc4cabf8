import http from 'node:http';

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The body read as JSON (undefined when it is not JSON). */
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface HttpRequestOptions {
  method?: string;
  /** Sent exactly as given, Host included: `fetch` would not let a test forge Host or Origin. */
  headers?: Record<string, string>;
  body?: string;
}

/** One real HTTP request to 127.0.0.1:`port`. */
export function httpRequest(port: number, target: string, options: HttpRequestOptions = {}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path: target, method: options.method ?? 'GET', headers: { host: `127.0.0.1:${port}`, ...options.headers } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body, json });
      });
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

/** The headers the page's own `fetch` sends with a rewind. */
export function sameOriginPost(port: number, body: unknown): HttpRequestOptions {
  return { method: 'POST', headers: { origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin', 'content-type': 'application/json' }, body: JSON.stringify(body) };
}
