#include "daemon/service/access_policy.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>

namespace accord::service {

AccessPolicy::AccessPolicy(std::vector<std::uint32_t> uids, std::vector<std::uint32_t> gids, bool allow_all)
    : uids_(std::move(uids)), gids_(std::move(gids)), allow_all_(allow_all), own_uid_(getuid()) {}

bool AccessPolicy::allowed(const wire::PeerCredentials& peer) const {
  if (allow_all_ || peer.uid == 0 || peer.uid == own_uid_) return true;
  if (std::find(uids_.begin(), uids_.end(), peer.uid) != uids_.end()) return true;
  if (gids_.empty()) return false;
  if (std::find(gids_.begin(), gids_.end(), peer.gid) != gids_.end()) return true;
  // Supplementary groups of the peer's user, from the user database.
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (getpwuid_r(peer.uid, &pw, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) return false;
  int count = 64;
  std::vector<gid_t> groups(static_cast<std::size_t>(count));
  if (getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &count) < 0) {
    groups.resize(static_cast<std::size_t>(count));
    if (getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &count) < 0) return false;
  }
  groups.resize(static_cast<std::size_t>(count));
  for (gid_t g : groups)
    if (std::find(gids_.begin(), gids_.end(), g) != gids_.end()) return true;
  return false;
}

std::string AccessPolicy::refusal(const wire::PeerCredentials& peer) const {
  std::string allowed = "root, uid " + std::to_string(own_uid_);
  for (std::uint32_t uid : uids_) allowed += ", uid " + std::to_string(uid);
  for (std::uint32_t gid : gids_) allowed += ", group " + std::to_string(gid);
  return "uid " + std::to_string(peer.uid) + " is not allowed to use accordd (allowed: " + allowed + ")";
}

}  // namespace accord::service
