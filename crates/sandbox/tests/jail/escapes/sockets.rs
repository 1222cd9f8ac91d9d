//! Host services behind UNIX sockets (review finding 6): with the network off, the jail talked
//! to a host program listening on a socket file inside an `ro` zone. Named UNIX sockets do not
//! belong to a network namespace, and Landlock (before ABI 9) does not cover connecting to one,
//! so the seccomp filter refuses `connect` and datagram UNIX sockets (whose `sendto`/`sendmsg`
//! name a destination) when the network is off. Socket pairs keep working.

use std::os::unix::net::{UnixDatagram, UnixListener};

use super::super::*;

#[tokio::test]
async fn no_connection_to_a_host_unix_socket_with_the_network_off() {
    let env = JailEnv::new();
    let work = env.tmp.path().join("work");
    let listeners: Vec<UnixListener> = ["input/host.sock", "output/host.sock"]
        .iter()
        .map(|name| {
            let listener = UnixListener::bind(work.join(name)).unwrap();
            listener.set_nonblocking(true).unwrap();
            listener
        })
        .collect();
    let datagram = UnixDatagram::bind(work.join("input/host.dgram")).unwrap();
    datagram.set_nonblocking(true).unwrap();
    let out = env
        .python(
            "import socket\n\
             def attempt(name, f):\n\
             \x20   try:\n        f()\n        print(name, 'REACHED')\n\
             \x20   except OSError as e:\n        print(name, 'refused', e.errno)\n\
             def stream(path):\n\
             \x20   s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n\
             \x20   s.connect(path)\n    s.sendall(b'hello host')\n\
             attempt('ro-zone', lambda: stream('/input/host.sock'))\n\
             attempt('rw-zone', lambda: stream('/output/host.sock'))\n\
             def dgram():\n\
             \x20   s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n\
             \x20   s.sendto(b'hello host', '/input/host.dgram')\n\
             attempt('dgram', dgram)\n\
             def pair_dgram():\n\
             \x20   a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\n\
             \x20   a.sendmsg([b'hello host'], [], 0, '/input/host.dgram')\n\
             attempt('pair-dgram', pair_dgram)\n\
             def seqpacket():\n\
             \x20   s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)\n\
             \x20   s.connect('/input/host.sock')\n\
             attempt('seqpacket', seqpacket)\n\
             a, b = socket.socketpair()\na.send(b'ok')\nprint('pair', b.recv(2).decode())\n",
        )
        .await;
    assert_exit(&out, 0);
    let text = &out.stdout.text;
    assert!(!text.contains("REACHED"), "{text}");
    assert_eq!(text.matches("refused").count(), 5, "{text}");
    assert!(text.ends_with("pair ok\n"), "{text}");
    for listener in &listeners {
        assert!(
            listener.accept().is_err(),
            "the host listener saw a connection"
        );
    }
    let mut buffer = [0u8; 64];
    assert!(
        datagram.recv(&mut buffer).is_err(),
        "the host socket got a datagram"
    );
}
