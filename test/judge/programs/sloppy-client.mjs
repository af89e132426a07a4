// A deliberately sloppy /v1 client (test/judge/sloppy-client.test.ts; docs/judge.md, client rules).
// It calls the API the way a careless app would, and breaks exactly these client rules:
//   client.login-instead-of-refresh  six logins of one account in a row, where a refresh would do
//   client.login-burst               then wrong passwords, until one address made 11 login attempts
//   client.refresh-token-reused      a refresh token sent again after it was rotated (the API
//                                    revokes its token family)
//   client.token-after-401           the access token of that revoked family, sent again after 401
//   client.token-in-query            an access token in the query string
//   client.unlock-offline-station    an unlock of a station it has just read as offline
// and exits 0, as a test suite that checks nothing of its client would.
//
// Usage: STATION_SIM_API_URL=http://… STATION_SIM_PASSWORD=… node sloppy-client.mjs EMAIL OFFLINE_STATION ONLINE_STATION
// (the password from the environment: secrets never go on a command line). It prints no token.
const apiUrl = process.env.STATION_SIM_API_URL;
const password = process.env.STATION_SIM_PASSWORD;
const [email, offline, online] = process.argv.slice(2);
if (!apiUrl || !password || !email || !offline || !online) throw new Error('usage: STATION_SIM_API_URL=… STATION_SIM_PASSWORD=… node sloppy-client.mjs EMAIL OFFLINE_STATION ONLINE_STATION');

async function call(method, path, { body, token } = {}) {
  const response = await fetch(`${apiUrl}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : undefined };
}

function expectStatus(what, answer, status) {
  if (answer.status !== status) throw new Error(`${what}: expected ${status}, got ${answer.status}`);
  return answer.json;
}

// A fresh login before every call, as if the app had never heard of refresh tokens.
let pair;
for (let n = 0; n < 6; n += 1) pair = expectStatus('login', await call('POST', '/v1/auth/login', { body: { email, password } }), 200);
for (let n = 0; n < 5; n += 1) expectStatus('wrong login', await call('POST', '/v1/auth/login', { body: { email, password: `${password}-typo` } }), 401);

// Reads a station, sees it offline, and unlocks anyway.
const station = expectStatus('read', await call('GET', `/v1/stations/${encodeURIComponent(offline)}`, { token: pair.accessToken }), 200);
if (station.status !== 'offline') throw new Error(`${offline} should be offline, it is ${station.status}`);
expectStatus('unlock', await call('POST', `/v1/stations/${encodeURIComponent(offline)}/locks/1/unlock`, { token: pair.accessToken }), 200);

// Puts the token where proxies and logs keep it (the API refuses it there: 401).
expectStatus('token in query', await call('GET', `/v1/stations/${encodeURIComponent(online)}?access_token=${encodeURIComponent(pair.accessToken)}`), 401);

// Refreshes, then refreshes again with the old refresh token: the API takes it for theft.
const rotated = expectStatus('refresh', await call('POST', '/v1/auth/refresh', { body: { refreshToken: pair.refreshToken } }), 200);
expectStatus('replayed refresh', await call('POST', '/v1/auth/refresh', { body: { refreshToken: pair.refreshToken } }), 401);

// The family is revoked: the new access token gets 401, and the app keeps sending it.
for (let n = 0; n < 3; n += 1) expectStatus('revoked token', await call('GET', `/v1/stations/${encodeURIComponent(online)}`, { token: rotated.accessToken }), 401);
