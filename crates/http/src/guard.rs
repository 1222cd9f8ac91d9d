//! Who may talk to the server: every request must name the bound address in its `Host`
//! header (so a DNS-rebinding page cannot reach it by another name), come from the page's own
//! origin when it says where it comes from (`Origin`), and carry the run's token — in the query
//! on the first load (`?token=…`, traded for an `HttpOnly; SameSite=Strict` cookie and a
//! redirect that drops it from the address bar), in the cookie afterwards. The cookie's name
//! ends with the server's port: a browser keeps cookies by host, not by port, so two servers
//! on one machine (`serve` and `serve --inbox`) with one name would overwrite each other's.
//! Every response carries a strict Content-Security-Policy, `nosniff`, no referrer and no
//! caching. A server of programs (`golem-forge mcp`) takes the token as `Authorization:
//! Bearer` instead ([`Access::bearer`]), with the same `Host` and `Origin` rules.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use axum::extract::{Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};

/// The start of the name of the cookie that carries the token after the first load; the
/// name is this, `_` and the port (see [`cookie_name`]).
const COOKIE: &str = "golem_forge_token";

/// The name of the token cookie of a server on `port`: `golem_forge_token_PORT`. Browsers send
/// a cookie of 127.0.0.1 to every port of it and let a later `Set-Cookie` of the same name
/// replace it whatever the port, so each server names its own; the value still reaches any
/// other local server the browser visits, where the token (fresh per server) grants nothing.
pub fn cookie_name(port: u16) -> String {
    format!("{COOKIE}_{port}")
}

/// The Content-Security-Policy of every response: nothing but the server's own files, no
/// inline script or style, images also from the `data:` and `blob:` URLs the page makes of
/// image results, and no framing.
pub const CSP: &str = "default-src 'self'; img-src 'self' data: blob:; connect-src 'self'; \
                       base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The address a server is bound to, and so which `Host` and `Origin` values name it: the
/// bound address (and `localhost` for a loopback one), or, for a server bound to every address
/// (`0.0.0.0`, `::`), any IP address of the machine with the port (and `localhost`, but no other
/// DNS name, so a rebinding name still cannot reach it). Shared by every HTTP front end (the
/// page here, `golem-forge mcp --http`).
#[derive(Debug, Clone)]
pub struct BoundAddress {
    port: u16,
    /// The `Host` values that name the server; `None` when bound to every address.
    hosts: Option<Vec<String>>,
    /// Where a printed address points (127.0.0.1 or ::1 for every address).
    shown: String,
}

impl BoundAddress {
    /// The rules for a server bound to `addr`.
    pub fn new(addr: SocketAddr) -> BoundAddress {
        let port = addr.port();
        let ip = if addr.ip().is_unspecified() {
            match addr {
                SocketAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
                SocketAddr::V6(_) => IpAddr::V6(Ipv6Addr::LOCALHOST),
            }
        } else {
            addr.ip()
        };
        let shown = SocketAddr::new(ip, port).to_string();
        let hosts = (!addr.ip().is_unspecified()).then(|| {
            let mut hosts = vec![shown.clone()];
            if ip.is_loopback() {
                hosts.push(format!("localhost:{port}"));
            }
            hosts
        });
        BoundAddress { port, hosts, shown }
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `HOST:PORT` to print in an address.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Whether `host` (a `Host` header) names this server.
    fn names_us(&self, host: &str) -> bool {
        match &self.hosts {
            Some(hosts) => hosts.iter().any(|known| known.eq_ignore_ascii_case(host)),
            None => {
                host.eq_ignore_ascii_case(&format!("localhost:{}", self.port))
                    || host
                        .parse::<SocketAddr>()
                        .is_ok_and(|addr| addr.port() == self.port)
            }
        }
    }

    /// Refuses `headers` whose `Host` does not name this server, or whose `Origin`, when sent,
    /// is not `http://` + that host (the address the page or client was loaded from).
    pub fn check(&self, headers: &HeaderMap) -> Result<(), (StatusCode, &'static str)> {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        if !self.names_us(host) {
            return Err((StatusCode::FORBIDDEN, "unknown host"));
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let own = origin
                .to_str()
                .ok()
                .and_then(|origin| origin.strip_prefix("http://"))
                .is_some_and(|origin| origin.eq_ignore_ascii_case(host));
            if !own {
                return Err((StatusCode::FORBIDDEN, "foreign origin"));
            }
        }
        Ok(())
    }
}

/// Whether `offered` is `expected`, in constant time over the token's length (how much of it
/// matched is not timed).
pub fn token_matches(expected: &str, offered: &str) -> bool {
    let (a, b) = (expected.as_bytes(), offered.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// How a request shows the run's token.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Credential {
    /// A browser page: `?token=` on the first load, traded for the per-port cookie `name`.
    PageCookie {
        /// [`cookie_name`] of the port.
        name: String,
    },
    /// A program (an MCP client): `Authorization: Bearer <token>` on every request; no
    /// cookie is set or read, so a browser tab cannot ride on one.
    Bearer,
}

/// What a request must show: the bound address (`Host`, `Origin`) and the run's token, the
/// way its [`Credential`] says. One type for every HTTP front end.
#[derive(Debug, Clone)]
pub struct Access {
    token: String,
    address: BoundAddress,
    credential: Credential,
}

impl Access {
    /// Access for a page server bound to `addr` with `token` (query token, then cookie).
    pub fn new(token: String, addr: SocketAddr) -> Access {
        Access {
            token,
            address: BoundAddress::new(addr),
            credential: Credential::PageCookie {
                name: cookie_name(addr.port()),
            },
        }
    }

    /// Access for a server of programs bound to `addr`: `Authorization: Bearer <token>`.
    pub fn bearer(token: String, addr: SocketAddr) -> Access {
        Access {
            token,
            address: BoundAddress::new(addr),
            credential: Credential::Bearer,
        }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.address.port()
    }

    /// The run's token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The name of the cookie a page server sets and reads (`None` for a bearer one).
    pub fn cookie_name(&self) -> Option<&str> {
        match &self.credential {
            Credential::PageCookie { name } => Some(name),
            Credential::Bearer => None,
        }
    }

    /// The address to open: a page server's with the token (`http://127.0.0.1:PORT/?token=…`),
    /// a bearer server's without a path (`http://127.0.0.1:PORT`), where the caller appends
    /// its endpoint.
    pub fn url(&self) -> String {
        match &self.credential {
            Credential::PageCookie { .. } => {
                format!("http://{}/?token={}", self.address.shown(), self.token)
            }
            Credential::Bearer => format!("http://{}", self.address.shown()),
        }
    }

    fn token_matches(&self, offered: &str) -> bool {
        token_matches(&self.token, offered)
    }

    /// Why `headers` and `query` may not pass, if they may not; `Ok(true)` when the token came
    /// in the query (to be traded for the cookie; never for a bearer server).
    pub fn check(
        &self,
        headers: &HeaderMap,
        query: Option<&str>,
    ) -> Result<bool, (StatusCode, &'static str)> {
        self.address.check(headers)?;
        match &self.credential {
            Credential::PageCookie { name } => self.check_page(headers, query, name),
            Credential::Bearer => self.check_bearer(headers).map(|()| false),
        }
    }

    fn check_page(
        &self,
        headers: &HeaderMap,
        query: Option<&str>,
        cookie: &str,
    ) -> Result<bool, (StatusCode, &'static str)> {
        if query
            .and_then(|q| param(q, "token"))
            .is_some_and(|t| self.token_matches(t))
        {
            return Ok(true);
        }
        let cookie_ok = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|h| h.to_str().ok())
            .flat_map(|h| h.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .filter(|(name, _)| *name == cookie)
            .any(|(_, t)| self.token_matches(t));
        if cookie_ok {
            Ok(false)
        } else {
            Err((
                StatusCode::UNAUTHORIZED,
                "a token is needed: open the address golem-forge serve printed",
            ))
        }
    }

    fn check_bearer(&self, headers: &HeaderMap) -> Result<(), (StatusCode, &'static str)> {
        let offered = headers
            .get_all(header::AUTHORIZATION)
            .iter()
            .filter_map(|h| h.to_str().ok())
            .filter_map(|h| {
                let (scheme, token) = h.trim().split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            })
            .any(|token| self.token_matches(token));
        if offered {
            Ok(())
        } else {
            Err((
                StatusCode::UNAUTHORIZED,
                "a bearer token is needed: send `Authorization: Bearer <token>` with the token \
                 golem-forge printed",
            ))
        }
    }
}

/// The value of `name` in a query string (tokens are hex, so nothing needs decoding).
fn param<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    query
        .split('&')
        .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
}

/// The middleware: refuses what [`Access`] refuses, trades a query token for the cookie, and
/// adds the security headers to every response.
pub async fn guard(
    State(access): State<std::sync::Arc<Access>>,
    request: Request,
    next: Next,
) -> Response {
    let verdict = access.check(request.headers(), request.uri().query());
    let mut response = match verdict {
        Err((status, why)) => (status, why).into_response(),
        Ok(false) => next.run(request).await,
        Ok(true) => {
            let cookie = format!(
                "{}={}; HttpOnly; SameSite=Strict; Path=/",
                access.cookie_name().unwrap_or_default(),
                access.token
            );
            // A page load drops the token from the address bar; other requests go through.
            let mut response = if request.method() == Method::GET && request.uri().path() == "/" {
                Redirect::to("/").into_response()
            } else {
                next.run(request).await
            };
            if let Ok(value) = HeaderValue::from_str(&cookie) {
                response.headers_mut().append(header::SET_COOKIE, value);
            }
            response
        }
    };
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access() -> Access {
        Access::new("abc123".into(), "127.0.0.1:4777".parse().unwrap())
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    #[test]
    fn the_host_must_name_the_bound_address() {
        let a = access();
        assert_eq!(a.url(), "http://127.0.0.1:4777/?token=abc123");
        assert_eq!(
            a.check(
                &headers(&[("host", "127.0.0.1:4777")]),
                Some("token=abc123")
            ),
            Ok(true)
        );
        assert_eq!(
            a.check(
                &headers(&[("host", "localhost:4777")]),
                Some("token=abc123")
            ),
            Ok(true)
        );
        for host in ["evil.example:4777", "127.0.0.1:4778", "127.0.0.1", ""] {
            assert_eq!(
                a.check(&headers(&[("host", host)]), Some("token=abc123")),
                Err((StatusCode::FORBIDDEN, "unknown host")),
                "{host}"
            );
        }
    }

    #[test]
    fn a_foreign_origin_is_refused_and_the_pages_own_passes() {
        let a = access();
        let own = headers(&[
            ("host", "127.0.0.1:4777"),
            ("origin", "http://127.0.0.1:4777"),
            ("cookie", "golem_forge_token_4777=abc123"),
        ]);
        assert_eq!(a.check(&own, None), Ok(false));
        for origin in ["http://evil.example", "https://127.0.0.1:4777", "null"] {
            let foreign = headers(&[
                ("host", "127.0.0.1:4777"),
                ("origin", origin),
                ("cookie", "golem_forge_token_4777=abc123"),
            ]);
            assert_eq!(
                a.check(&foreign, None),
                Err((StatusCode::FORBIDDEN, "foreign origin")),
                "{origin}"
            );
        }
    }

    #[test]
    fn the_token_comes_in_the_query_or_the_cookie_and_must_match() {
        let a = access();
        let host = ("host", "127.0.0.1:4777");
        assert!(matches!(
            a.check(&headers(&[host]), None),
            Err((StatusCode::UNAUTHORIZED, _))
        ));
        assert!(matches!(
            a.check(&headers(&[host]), Some("token=abc124")),
            Err((StatusCode::UNAUTHORIZED, _))
        ));
        assert!(matches!(
            a.check(&headers(&[host]), Some("token=abc12")),
            Err((StatusCode::UNAUTHORIZED, _))
        ));
        assert!(matches!(
            a.check(&headers(&[host]), Some("x=1&token=abc123")),
            Ok(true)
        ));
        assert!(matches!(
            a.check(
                &headers(&[host, ("cookie", "a=b; golem_forge_token_4777=abc123")]),
                None
            ),
            Ok(false)
        ));
        assert!(matches!(
            a.check(
                &headers(&[host, ("cookie", "golem_forge_token_4777=nope")]),
                None
            ),
            Err((StatusCode::UNAUTHORIZED, _))
        ));
        assert!(matches!(
            a.check(
                &headers(&[host, ("cookie", "xgolem_forge_token_4777=abc123")]),
                None
            ),
            Err((StatusCode::UNAUTHORIZED, _))
        ));
        // Another port's cookie, the old unported name, or a name that only starts like ours
        // is not ours, even with our token.
        for other in [
            "golem_forge_token_4778=abc123",
            "golem_forge_token=abc123",
            "golem_forge_token_47770=abc123",
            "golem_forge_token_477=abc123",
        ] {
            assert!(
                matches!(
                    a.check(&headers(&[host, ("cookie", other)]), None),
                    Err((StatusCode::UNAUTHORIZED, _))
                ),
                "{other}"
            );
        }
        // A browser sends every port's cookie of the host: ours among them lets us in.
        assert_eq!(
            a.check(
                &headers(&[
                    host,
                    (
                        "cookie",
                        "golem_forge_token_4778=zzz; golem_forge_token_4777=abc123"
                    )
                ]),
                None
            ),
            Ok(false)
        );
        assert_eq!(a.cookie_name(), Some("golem_forge_token_4777"));
    }

    #[test]
    fn ipv6_and_other_addresses_name_themselves() {
        let v6 = Access::new("t".into(), "[::1]:9000".parse().unwrap());
        assert_eq!(v6.url(), "http://[::1]:9000/?token=t");
        assert!(
            v6.check(&headers(&[("host", "localhost:9000")]), Some("token=t"))
                .is_ok()
        );
        let lan = Access::new("t".into(), "192.168.1.5:4777".parse().unwrap());
        assert!(
            lan.check(&headers(&[("host", "192.168.1.5:4777")]), Some("token=t"))
                .is_ok()
        );
        assert!(
            lan.check(&headers(&[("host", "localhost:4777")]), Some("token=t"))
                .is_err()
        );
    }

    #[test]
    fn a_server_on_every_address_takes_ip_addresses_but_no_other_names() {
        let every = Access::new("t".into(), "0.0.0.0:4777".parse().unwrap());
        assert_eq!(every.url(), "http://127.0.0.1:4777/?token=t");
        for host in [
            "192.168.1.5:4777",
            "10.0.0.2:4777",
            "[fe80::1]:4777",
            "localhost:4777",
        ] {
            let from_there = headers(&[("host", host), ("origin", &format!("http://{host}"))]);
            assert!(every.check(&from_there, Some("token=t")).is_ok(), "{host}");
        }
        for host in ["evil.example:4777", "192.168.1.5:80", "192.168.1.5"] {
            assert_eq!(
                every.check(&headers(&[("host", host)]), Some("token=t")),
                Err((StatusCode::FORBIDDEN, "unknown host")),
                "{host}"
            );
        }
        let foreign = headers(&[
            ("host", "192.168.1.5:4777"),
            ("origin", "http://10.0.0.2:4777"),
        ]);
        assert_eq!(
            every.check(&foreign, Some("token=t")),
            Err((StatusCode::FORBIDDEN, "foreign origin"))
        );
    }
}
