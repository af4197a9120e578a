//===- Watchdog.cpp - Timing launches out at their deadlines --------------===//

#include "kiln/Runtime/Watchdog.h"

using namespace kiln;

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> L(M);
    Quit = true;
  }
  Changed.notify_all();
  if (Thread.joinable())
    Thread.join();
}

uint64_t Watchdog::arm(LaunchStop &Stop, Clock::time_point Deadline) {
  std::lock_guard<std::mutex> L(M);
  uint64_t Ticket = NextTicket++;
  Armed.emplace(std::make_pair(Deadline, Ticket), &Stop);
  Deadlines.emplace(Ticket, Deadline);
  if (!Thread.joinable())
    Thread = std::thread([this] { run(); });
  Changed.notify_all();
  return Ticket;
}

void Watchdog::disarm(uint64_t Ticket) {
  std::lock_guard<std::mutex> L(M);
  auto It = Deadlines.find(Ticket);
  if (It == Deadlines.end())
    return; // fired already
  Armed.erase({It->second, Ticket});
  Deadlines.erase(It);
}

void Watchdog::run() {
  std::unique_lock<std::mutex> L(M);
  while (!Quit) {
    if (Armed.empty()) {
      Changed.wait(L);
      continue;
    }
    auto First = Armed.begin();
    // A copy: disarm() may erase the node while the wait has the lock
    // released, and the wait reads its deadline again when it wakes (a
    // heap-use-after-free under ASan when it took a reference).
    const Clock::time_point Deadline = First->first.first;
    if (Clock::now() < Deadline) {
      Changed.wait_until(L, Deadline);
      continue; // re-read: disarmed, or an earlier deadline armed
    }
    // Under the lock: disarm() cannot return while the stop is touched.
    First->second->timeOut();
    Deadlines.erase(First->first.second);
    Armed.erase(First);
  }
}
