//! Who may talk to the HTTP server: every request must name the bound address in its `Host`
//! header (so a DNS-rebinding page cannot reach it by another name), come from that address
//! when it says where it comes from (`Origin`), and carry the run's token as
//! `Authorization: Bearer <token>`. The `Host` and `Origin` rules are `golem-http`'s
//! ([`BoundAddress`], one policy for every HTTP front end); the token travels in a header,
//! since MCP clients are programs, not browser tabs.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use golem_http::guard::{BoundAddress, token_matches};

/// The path the MCP endpoint is served at.
pub const ENDPOINT: &str = "/mcp";

/// What a request must show.
#[derive(Debug, Clone)]
pub struct Access {
    token: String,
    address: BoundAddress,
}

impl Access {
    /// Access for a server bound to `addr` with `token`.
    pub fn new(token: String, addr: SocketAddr) -> Access {
        Access {
            token,
            address: BoundAddress::new(addr),
        }
    }

    /// The endpoint's address: `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{ENDPOINT}", self.address.shown())
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.address.port()
    }

    /// The run's token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Why `headers` may not pass, if they may not.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), (StatusCode, &'static str)> {
        self.address.check(headers)?;
        let offered = headers
            .get_all(header::AUTHORIZATION)
            .iter()
            .filter_map(|h| h.to_str().ok())
            .filter_map(|h| {
                let (scheme, token) = h.trim().split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            })
            .any(|token| token_matches(&self.token, token));
        if offered {
            Ok(())
        } else {
            Err((
                StatusCode::UNAUTHORIZED,
                "a bearer token is needed: send `Authorization: Bearer <token>` with the token \
                 golem-forge mcp printed",
            ))
        }
    }
}

/// The middleware: refuses what [`Access`] refuses; marks every response not to be cached
/// or sniffed.
pub async fn guard(State(access): State<Arc<Access>>, request: Request, next: Next) -> Response {
    let mut response = match access.check(request.headers()) {
        Err((status, why)) => {
            let mut response = (status, why).into_response();
            if status == StatusCode::UNAUTHORIZED {
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"golem-forge\""),
                );
            }
            response
        }
        Ok(()) => next.run(request).await,
    };
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access() -> Access {
        Access::new("abc123".into(), "127.0.0.1:4778".parse().unwrap())
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

    const BEARER: (&str, &str) = ("authorization", "Bearer abc123");

    #[test]
    fn the_host_must_name_the_bound_address() {
        let a = access();
        assert_eq!(a.url(), "http://127.0.0.1:4778/mcp");
        for host in ["127.0.0.1:4778", "localhost:4778", "LOCALHOST:4778"] {
            assert_eq!(
                a.check(&headers(&[("host", host), BEARER])),
                Ok(()),
                "{host}"
            );
        }
        for host in ["evil.example:4778", "127.0.0.1:4779", "127.0.0.1", ""] {
            assert_eq!(
                a.check(&headers(&[("host", host), BEARER])),
                Err((StatusCode::FORBIDDEN, "unknown host")),
                "{host}"
            );
        }
    }

    #[test]
    fn a_foreign_origin_is_refused_and_the_servers_own_passes() {
        let a = access();
        let own = headers(&[
            ("host", "127.0.0.1:4778"),
            ("origin", "http://127.0.0.1:4778"),
            BEARER,
        ]);
        assert_eq!(a.check(&own), Ok(()));
        for origin in ["http://evil.example", "https://127.0.0.1:4778", "null"] {
            let foreign = headers(&[("host", "127.0.0.1:4778"), ("origin", origin), BEARER]);
            assert_eq!(
                a.check(&foreign),
                Err((StatusCode::FORBIDDEN, "foreign origin")),
                "{origin}"
            );
        }
    }

    #[test]
    fn the_bearer_token_must_match() {
        let a = access();
        let host = ("host", "127.0.0.1:4778");
        for auth in [
            None,
            Some("Bearer abc124"),
            Some("Bearer abc12"),
            Some("Bearer abc1234"),
            Some("Basic abc123"),
            Some("abc123"),
            Some("Bearer"),
        ] {
            let mut pairs = vec![host];
            if let Some(auth) = auth {
                pairs.push(("authorization", auth));
            }
            assert!(
                matches!(
                    a.check(&headers(&pairs)),
                    Err((StatusCode::UNAUTHORIZED, _))
                ),
                "{auth:?}"
            );
        }
        for auth in ["Bearer abc123", "bearer abc123", "BEARER  abc123 "] {
            assert_eq!(
                a.check(&headers(&[host, ("authorization", auth)])),
                Ok(()),
                "{auth}"
            );
        }
    }

    #[test]
    fn a_server_on_every_address_takes_ip_addresses_but_no_other_names() {
        let every = Access::new("t".into(), "0.0.0.0:4778".parse().unwrap());
        assert_eq!(every.url(), "http://127.0.0.1:4778/mcp");
        let bearer = ("authorization", "Bearer t");
        for host in ["192.168.1.5:4778", "[fe80::1]:4778", "localhost:4778"] {
            assert!(
                every.check(&headers(&[("host", host), bearer])).is_ok(),
                "{host}"
            );
        }
        for host in ["evil.example:4778", "192.168.1.5:80", "192.168.1.5"] {
            assert_eq!(
                every.check(&headers(&[("host", host), bearer])),
                Err((StatusCode::FORBIDDEN, "unknown host")),
                "{host}"
            );
        }
        let lan = Access::new("t".into(), "192.168.1.5:4778".parse().unwrap());
        assert!(
            lan.check(&headers(&[("host", "localhost:4778"), bearer]))
                .is_err()
        );
    }
}
