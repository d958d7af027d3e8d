// The REST API under /api/v1, with the token from local storage in the Authorization header.

export const TOKEN_KEY = "agent-hub.token";

export class ApiError extends Error {
  constructor(status, code, message, details = null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

export function storedToken() {
  try { return localStorage.getItem(TOKEN_KEY); } catch { return null; }
}

export function storeToken(token) {
  localStorage.setItem(TOKEN_KEY, token);
}

export function forgetToken() {
  try { localStorage.removeItem(TOKEN_KEY); } catch { /* storage blocked: nothing kept */ }
}

function url(path, query) {
  const u = new URL(`/api/v1${path}`, location.origin);
  for (const [k, v] of Object.entries(query || {})) {
    if (v !== null && v !== undefined && v !== "") u.searchParams.set(k, String(v));
  }
  return u.pathname + u.search;
}

async function problem(res) {
  let body = null;
  try { body = await res.json(); } catch { /* not JSON: the status speaks */ }
  const code = (body && body.code) || (res.status === 401 ? "unauthenticated" : "http_" + res.status);
  const message = (body && (body.detail || body.title)) || `the hub answered ${res.status}`;
  return new ApiError(res.status, code, message, body && body.details);
}

// One request; resolves to the parsed JSON (null for 204) or rejects with ApiError.
// onUnauthorized(error) is called on a 401 before the rejection (the app goes to Connect).
export function createApi({ token = storedToken, onUnauthorized = () => {} } = {}) {
  // keepalive: the request outlives the page (a held answer sent as the tab closes: undo.js).
  async function request(method, path, { query, body, auth, signal, keepalive = false } = {}) {
    const headers = { Accept: "application/json" };
    const t = auth !== undefined ? auth : token();
    if (t) headers.Authorization = `Bearer ${t}`;
    const init = { method, headers, signal, cache: "no-store", keepalive };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch(url(path, query), init);
    } catch (err) {
      if (err && err.name === "AbortError") throw err;
      throw new ApiError(0, "offline", "the hub cannot be reached");
    }
    if (res.status === 204) return null;
    if (!res.ok) {
      const err = await problem(res);
      if (res.status === 401 && auth === undefined) onUnauthorized(err);
      throw err;
    }
    const text = await res.text();
    return text ? JSON.parse(text) : null;
  }
  return {
    request,
    get: (path, query, opts = {}) => request("GET", path, { ...opts, query }),
    post: (path, body, opts = {}) => request("POST", path, { ...opts, body: body === undefined ? {} : body }),
    put: (path, body, opts = {}) => request("PUT", path, { ...opts, body }),
    patch: (path, body, opts = {}) => request("PATCH", path, { ...opts, body }),
    del: (path, opts = {}) => request("DELETE", path, opts),
    url,
  };
}
