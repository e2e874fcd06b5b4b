// Which uids may use the daemon (ARCHITECTURE.md "Security model"): root and the
// daemon's own uid always; otherwise the allowlists of uids and groups (primary or
// supplementary), or everyone when the box is single-user by configuration.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "proto/wire/session_channel.h"

namespace accord::service {

class AccessPolicy {
 public:
  AccessPolicy(std::vector<std::uint32_t> uids, std::vector<std::uint32_t> gids, bool allow_all);
  bool allowed(const wire::PeerCredentials& peer) const;
  // "uid 65534 is not allowed to use accordd (allowed: root, uid 1000, group 27)".
  std::string refusal(const wire::PeerCredentials& peer) const;

 private:
  std::vector<std::uint32_t> uids_;
  std::vector<std::uint32_t> gids_;
  bool allow_all_;
  std::uint32_t own_uid_;
};

}  // namespace accord::service
