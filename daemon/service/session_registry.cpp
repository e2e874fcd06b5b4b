#include "daemon/service/session_registry.h"

namespace accord::service {

Status SessionRegistry::add(std::shared_ptr<ServiceSession> session) {
  std::lock_guard lock(mu_);
  if (refusing_) return unsupported_error("accordd is stopping and accepts no new sessions");
  if (by_token_.size() >= max_sessions_)
    return busy_error("accordd serves " + std::to_string(max_sessions_) + " sessions, its limit (max_sessions)");
  token_of_[session->id()] = session->token();
  by_token_[session->token()] = std::move(session);
  return Status();
}

std::shared_ptr<ServiceSession> SessionRegistry::find_by_token(const std::string& token) const {
  std::lock_guard lock(mu_);
  auto it = by_token_.find(token);
  return it == by_token_.end() ? nullptr : it->second;
}

void SessionRegistry::close(std::uint64_t session_id) {
  std::shared_ptr<ServiceSession> session;
  {
    std::lock_guard lock(mu_);
    auto t = token_of_.find(session_id);
    if (t == token_of_.end()) return;
    auto s = by_token_.find(t->second);
    session = std::move(s->second);
    by_token_.erase(s);
    token_of_.erase(t);
  }
  session->close();  // outside the lock: releasing handles may take a while
}

void SessionRegistry::close_all() {
  std::unordered_map<std::string, std::shared_ptr<ServiceSession>> sessions;
  {
    std::lock_guard lock(mu_);
    refusing_ = true;
    sessions.swap(by_token_);
    token_of_.clear();
  }
  for (auto& [token, session] : sessions) session->close();
}

std::vector<std::shared_ptr<ServiceSession>> SessionRegistry::list() const {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<ServiceSession>> out;
  out.reserve(by_token_.size());
  for (const auto& [token, session] : by_token_) out.push_back(session);
  return out;
}

std::size_t SessionRegistry::size() const {
  std::lock_guard lock(mu_);
  return by_token_.size();
}

}  // namespace accord::service
