// The options msp's HTTP server sets on its TCP sockets.
//
// Why TCP_NODELAY: cpp-httplib writes a response as two send() calls (the
// status line and headers, then the body). With Nagle's algorithm on, the
// body waits for the ACK of the headers, and the client delays that ACK by
// up to 40 ms: every request took ~44 ms on loopback (healthz p50 44 ms;
// 0.13 ms with TCP_NODELAY).
#ifndef MSP_SERVER_SOCKET_OPTIONS_H_
#define MSP_SERVER_SOCKET_OPTIONS_H_

namespace msp {

// Sets the options of a listening socket, before bind(): SO_REUSEADDR (a
// restarted server binds while old connections are in TIME_WAIT; unlike
// cpp-httplib's default SO_REUSEPORT, a second server on a port in use fails
// to bind instead of sharing it) and TCP_NODELAY. Linux gives every socket
// accept() returns the listening socket's TCP_NODELAY, which is how the
// accepted sockets get it (cpp-httplib has no hook for them).
// Installed with httplib::Server::set_socket_options. Errors are ignored, as
// cpp-httplib ignores them: the socket still works, only slower.
void SetListenSocketOptions(int fd);

// Sets TCP_NODELAY on a TCP socket. Returns false (errno set) if it failed.
bool SetTcpNoDelay(int fd);

}  // namespace msp

#endif  // MSP_SERVER_SOCKET_OPTIONS_H_
