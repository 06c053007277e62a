// Socket options of the HTTP server (see socket_options.h).
#include "server/socket_options.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace msp {

bool SetTcpNoDelay(int fd) {
  const int on = 1;
  return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)) == 0;
}

void SetListenSocketOptions(int fd) {
  const int on = 1;
  (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  (void)SetTcpNoDelay(fd);
}

}  // namespace msp
