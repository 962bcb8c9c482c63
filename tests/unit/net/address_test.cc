// Addresses as --admin and --probe write them ("HOST:PORT", "[IPv6]:PORT"),
// numeric ones resolved (no name service asked), and back to text.
#include "net/address.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <string>
#include <vector>

namespace hello {
namespace {

TEST(SplitHostPort, TakesAHostAndAPort) {
  std::string host;
  int port = 0;
  ASSERT_TRUE(split_host_port("127.0.0.1:9901", host, port));
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 9901);
  ASSERT_TRUE(split_host_port("localhost:0", host, port));
  EXPECT_EQ(host, "localhost");
  EXPECT_EQ(port, 0);
}

TEST(SplitHostPort, AnIpv6HostLosesItsBrackets) {
  std::string host;
  int port = 0;
  ASSERT_TRUE(split_host_port("[::1]:65535", host, port));
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 65535);
}

TEST(SplitHostPort, RefusesWhatIsNotHostColonPort) {
  for (const char* text : {"127.0.0.1",   // no port
                           ":80",         // no host
                           "127.0.0.1:",  // an empty port
                           "[::1:80",     // an unclosed bracket
                           "h:65536",     // over 65535
                           "h:123456",    // over five digits
                           "h:8o",        // not digits
                           "h:-1", "h:+1"}) {
    std::string host = "unchanged";
    int port = -7;
    EXPECT_FALSE(split_host_port(text, host, port)) << text;
  }
}

TEST(Resolve, ANumericAddressNeedsNoNameService) {
  struct sockaddr_storage ss {};
  ASSERT_TRUE(resolve("127.0.0.1", 8080, &ss));
  ASSERT_EQ(ss.ss_family, AF_INET);
  auto* v4 = reinterpret_cast<struct sockaddr_in*>(&ss);
  EXPECT_EQ(ntohs(v4->sin_port), 8080);
  EXPECT_EQ(ntohl(v4->sin_addr.s_addr), INADDR_LOOPBACK);
  ASSERT_TRUE(resolve("::1", 443, &ss));
  ASSERT_EQ(ss.ss_family, AF_INET6);
  auto* v6 = reinterpret_cast<struct sockaddr_in6*>(&ss);
  EXPECT_EQ(ntohs(v6->sin6_port), 443);
  EXPECT_TRUE(IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr));
}

TEST(AddressText, Ipv4PlainAndIpv6InBrackets) {
  struct sockaddr_in v4 {};
  v4.sin_family = AF_INET;
  ASSERT_EQ(inet_pton(AF_INET, "10.1.2.3", &v4.sin_addr), 1);
  EXPECT_EQ(address_text(reinterpret_cast<struct sockaddr*>(&v4), 80), "10.1.2.3:80");
  struct sockaddr_in6 v6 {};
  v6.sin6_family = AF_INET6;
  ASSERT_EQ(inet_pton(AF_INET6, "fe80::1", &v6.sin6_addr), 1);
  EXPECT_EQ(address_text(reinterpret_cast<struct sockaddr*>(&v6), 9901), "[fe80::1]:9901");
}

}  // namespace
}  // namespace hello
