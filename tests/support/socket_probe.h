// Tests' view of this process's TCP sockets: every open descriptor that is a
// TCP socket, with its ports and whether TCP_NODELAY is on. Lets a test check
// the sockets a server accepted or a client opened in the same process
// (neither cpp-httplib nor msp hands out those descriptors).
#ifndef MSP_TESTS_SUPPORT_SOCKET_PROBE_H_
#define MSP_TESTS_SUPPORT_SOCKET_PROBE_H_

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

namespace msp::testing {

struct TcpSocketInfo {
  int fd = -1;
  int local_port = 0;
  int peer_port = 0;       // 0: not connected
  bool listening = false;  // SO_ACCEPTCONN
  bool nodelay = false;    // TCP_NODELAY
};

inline int PortOf(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
  return 0;
}

// The TCP sockets (IPv4 and IPv6) open in this process now.
inline std::vector<TcpSocketInfo> TcpSocketsOfThisProcess() {
  std::vector<TcpSocketInfo> out;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return out;
  const int dir_fd = dirfd(dir);
  while (dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd == dir_fd) continue;
    struct stat st {};
    if (fstat(static_cast<int>(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    int type = 0;
    socklen_t len = sizeof(type);
    if (getsockopt(static_cast<int>(fd), SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) continue;
    sockaddr_storage local{};
    len = sizeof(local);
    if (getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&local), &len) != 0) continue;
    if (local.ss_family != AF_INET && local.ss_family != AF_INET6) continue;
    TcpSocketInfo info;
    info.fd = static_cast<int>(fd);
    info.local_port = PortOf(local);
    sockaddr_storage peer{};
    len = sizeof(peer);
    if (getpeername(info.fd, reinterpret_cast<sockaddr*>(&peer), &len) == 0) info.peer_port = PortOf(peer);
    int value = 0;
    len = sizeof(value);
    info.listening = getsockopt(info.fd, SOL_SOCKET, SO_ACCEPTCONN, &value, &len) == 0 && value != 0;
    value = 0;
    len = sizeof(value);
    info.nodelay = getsockopt(info.fd, IPPROTO_TCP, TCP_NODELAY, &value, &len) == 0 && value != 0;
    out.push_back(info);
  }
  closedir(dir);
  return out;
}

}  // namespace msp::testing

#endif  // MSP_TESTS_SUPPORT_SOCKET_PROBE_H_
