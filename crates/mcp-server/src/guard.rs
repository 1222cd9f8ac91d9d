//! Who may talk to the HTTP server: every request must name the bound address in its `Host`
//! header (so a DNS-rebinding page cannot reach it by another name), come from that address
//! when it says where it comes from (`Origin`), and carry the run's token as
//! `Authorization: Bearer <token>`. The `Host` and `Origin` rules are `golem-http`'s
//! (one [`Access`] for every HTTP front end, here [`Access::bearer`]); the token travels in a
//! header, since MCP clients are programs, not browser tabs: no cookie is set or read, and a
//! token in the query does not count.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::http::header::{self, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
pub use golem_http::guard::Access;

/// The path the MCP endpoint is served at.
pub const ENDPOINT: &str = "/mcp";

/// The endpoint's address: `http://127.0.0.1:PORT/mcp`.
pub fn endpoint_url(access: &Access) -> String {
    format!("{}{ENDPOINT}", access.url())
}

/// The middleware: refuses what [`Access`] refuses; marks every response not to be cached
/// or sniffed.
pub async fn guard(State(access): State<Arc<Access>>, request: Request, next: Next) -> Response {
    let mut response = match access.check(request.headers(), None) {
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
        Ok(_) => next.run(request).await,
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
    use axum::http::header::HeaderMap;

    use super::*;

    fn access() -> Access {
        Access::bearer("abc123".into(), "127.0.0.1:4778".parse().unwrap())
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
        assert_eq!(endpoint_url(&a), "http://127.0.0.1:4778/mcp");
        for host in ["127.0.0.1:4778", "localhost:4778", "LOCALHOST:4778"] {
            assert_eq!(
                a.check(&headers(&[("host", host), BEARER]), None),
                Ok(false),
                "{host}"
            );
        }
        for host in ["evil.example:4778", "127.0.0.1:4779", "127.0.0.1", ""] {
            assert_eq!(
                a.check(&headers(&[("host", host), BEARER]), None),
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
        assert_eq!(a.check(&own, None), Ok(false));
        for origin in ["http://evil.example", "https://127.0.0.1:4778", "null"] {
            let foreign = headers(&[("host", "127.0.0.1:4778"), ("origin", origin), BEARER]);
            assert_eq!(
                a.check(&foreign, None),
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
                    a.check(&headers(&pairs), None),
                    Err((StatusCode::UNAUTHORIZED, _))
                ),
                "{auth:?}"
            );
        }
        // A page's credentials do not count here.
        let cookie = ("cookie", "golem_forge_token_4778=abc123");
        assert!(matches!(
            a.check(&headers(&[host, cookie]), Some("token=abc123")),
            Err((StatusCode::UNAUTHORIZED, _))
        ));
        assert_eq!(a.cookie_name(), None);
        for auth in ["Bearer abc123", "bearer abc123", "BEARER  abc123 "] {
            assert_eq!(
                a.check(&headers(&[host, ("authorization", auth)]), None),
                Ok(false),
                "{auth}"
            );
        }
    }

    #[test]
    fn a_server_on_every_address_takes_ip_addresses_but_no_other_names() {
        let every = Access::bearer("t".into(), "0.0.0.0:4778".parse().unwrap());
        assert_eq!(endpoint_url(&every), "http://127.0.0.1:4778/mcp");
        let bearer = ("authorization", "Bearer t");
        for host in ["192.168.1.5:4778", "[fe80::1]:4778", "localhost:4778"] {
            assert!(
                every
                    .check(&headers(&[("host", host), bearer]), None)
                    .is_ok(),
                "{host}"
            );
        }
        for host in ["evil.example:4778", "192.168.1.5:80", "192.168.1.5"] {
            assert_eq!(
                every.check(&headers(&[("host", host), bearer]), None),
                Err((StatusCode::FORBIDDEN, "unknown host")),
                "{host}"
            );
        }
        let lan = Access::bearer("t".into(), "192.168.1.5:4778".parse().unwrap());
        assert!(
            lan.check(&headers(&[("host", "localhost:4778"), bearer]), None)
                .is_err()
        );
    }
}
