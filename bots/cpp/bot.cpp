// Tablanette Arena example bot in C++ (synchronous gRPC API).
//
// One bidirectional stream tablanette.v1.BotGateway/Connect: send Hello, get
// Welcome, then answer every Turn with a PlayMove (index into legal_plays).
// Each game has its own thread and its own strategy (game_thread.h), so a slow
// decision in one game never delays another; a keepalive thread sends
// Keepalive every Welcome.keepalive_ms / 2; so writes to the stream go through
// one mutex (Outbox). When the stream ends (server shutdown,
// network error) the bot connects again, to the next address of its --address
// list, after a short back-off (connection.h explains the rules); it waits
// longer while another session of the bot is live (ALREADY_EXISTS) or when the
// server asks it to slow down (RESOURCE_EXHAUSTED). Bad or revoked credentials
// end the program with a non-zero exit code. SIGINT / SIGTERM exit 0.
//
// The strategy lives in strategy.cpp (ChooseMove); game_strategy.cpp says
// which strategy each game gets; strategy.h states the contract.

#include <grpcpp/grpcpp.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "connection.h"
#include "game_thread.h"
#include "packed.h"
#include "strategy.h"
#include "tablanette/v1/arena.grpc.pb.h"

namespace v1 = tablanette::v1;
using tablanette_bot::Backoff;
using tablanette_bot::GameThread;
using tablanette_bot::kFeatures;
using tablanette_bot::UnpackTurn;

namespace {

// ---------------------------------------------------------------- logging --

std::mutex g_log_mu;

template <typename... Args>
void Log(const Args&... args) {
  std::ostringstream line;
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
  char millis[8];
  std::snprintf(millis, sizeof millis, ".%03dZ", static_cast<int>(ms));
  line << stamp << millis << " cpp-bot: ";
  (line << ... << args);
  line << '\n';
  std::lock_guard<std::mutex> lock(g_log_mu);
  std::cerr << line.str() << std::flush;
}

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// ---------------------------------------------------------------- options --

struct Options {
  std::vector<std::string> addresses;  // engine replicas, tried in turn
  std::string token;
  std::string name;
  int max_games = 4;
  long games = 0;  // exit after this many GameOver messages; 0 = run forever
  bool verbose = false;
  std::string version;  // Hello.version: TABLANETTE_BOT_VERSION or the CMake-configured label
};

std::string EnvOr(const char* var, const std::string& fallback) {
  const char* v = std::getenv(var);
  return (v != nullptr && *v != '\0') ? std::string(v) : fallback;
}

void PrintUsage(std::ostream& out) {
  out << "Usage: tablanette-cpp-bot [options]\n"
         "\n"
         "Connects to a Tablanette Arena bot gateway (tablanette.v1.BotGateway/Connect)\n"
         "and plays the games it is given with a greedy strategy.\n"
         "\n"
         "Options:\n"
         "  --address LIST       gateway address HOST:PORT, or a comma-separated list of engine\n"
         "                       replicas (HOST:PORT,HOST:PORT,...): after a failure the bot\n"
         "                       tries the next one (env TABLANETTE_ADDRESS, default 127.0.0.1:50051)\n"
         "  --token TOKEN        bot token printed once by `tablanette bot add NAME` (required).\n"
         "                       Prefer the environment variable TABLANETTE_TOKEN: command-line\n"
         "                       arguments are visible to other users of the machine in `ps`\n"
         "  --name NAME          bot name the token was issued for\n"
         "                       (env TABLANETTE_BOT_NAME, default cpp-greedy)\n"
         "  --max-games N        games to play at once (default 4)\n"
         "  --games N            exit 0 after N games are over (default 0: run until stopped;\n"
         "                       games still running are then forfeited after the grace period)\n"
         "  --verbose            log every game start and every move\n"
         "  --version            print the version label sent in Hello and exit\n"
         "                       (env TABLANETTE_BOT_VERSION replaces it)\n"
         "  -h, --help           print this help and exit\n"
         "\n"
         "Exit status: 0 on SIGINT/SIGTERM (or after --games), 1 when the server refuses the\n"
         "bot (bad or revoked token, wrong name, malformed Hello, not a bot gateway), 2 on a\n"
         "usage error. Everything else is retried on the next address after 0.25 s, 0.5 s,\n"
         "1 s, then every 2 s (+-20%), within the arena's grace period; at least 5 s while\n"
         "another session of the bot is live (ALREADY_EXISTS), at least 1 s when the server\n"
         "asks it to slow down (RESOURCE_EXHAUSTED), or the server's retry-after-ms if longer.\n";
}

[[noreturn]] void UsageError(const std::string& msg) {
  std::cerr << "tablanette-cpp-bot: " << msg << "\n(see --help)\n";
  std::exit(2);
}

long ParseNumber(const std::string& flag, const std::string& text, long min, long max) {
  try {
    size_t used = 0;
    const long v = std::stol(text, &used);
    if (used != text.size() || v < min || v > max) throw std::out_of_range(text);
    return v;
  } catch (const std::exception&) {
    UsageError(flag + " needs a whole number between " + std::to_string(min) + " and " +
               std::to_string(max) + ", got '" + text + "'");
  }
}

Options ParseArgs(int argc, char** argv) {
  Options opt;
  std::string address_list = EnvOr("TABLANETTE_ADDRESS", "127.0.0.1:50051");
  opt.token = EnvOr("TABLANETTE_TOKEN", "");
  opt.name = EnvOr("TABLANETTE_BOT_NAME", "cpp-greedy");
  opt.version = tablanette_bot::VersionLabel(std::getenv("TABLANETTE_BOT_VERSION"));

  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_value = false;
    const auto eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    auto take = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= argc) UsageError(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      PrintUsage(std::cout);
      std::exit(0);
    } else if (arg == "--version") {
      std::cout << opt.version << " (gRPC " << grpc::Version() << ")\n";
      std::exit(0);
    } else if (arg == "--address") {
      address_list = take();
    } else if (arg == "--token") {
      opt.token = take();
    } else if (arg == "--name") {
      opt.name = take();
    } else if (arg == "--max-games") {
      opt.max_games = static_cast<int>(ParseNumber(arg, take(), 1, 1000000));
    } else if (arg == "--games") {
      opt.games = ParseNumber(arg, take(), 0, 1000000000L);
    } else if (arg == "--verbose") {
      opt.verbose = true;
    } else {
      UsageError("unknown argument '" + std::string(argv[i]) + "'");
    }
  }
  opt.addresses = tablanette_bot::ParseAddressList(address_list);
  if (opt.addresses.empty())
    UsageError("--address needs at least one HOST:PORT, got '" + address_list + "'");
  if (opt.name.empty()) UsageError("--name must not be empty");
  if (opt.token.empty())
    UsageError("no token: set TABLANETTE_TOKEN (or pass --token TOKEN) to the token "
               "`tablanette bot add NAME` printed");
  return opt;
}

std::string JoinAddresses(const std::vector<std::string>& addresses) {
  std::string out;
  for (const auto& a : addresses) out += (out.empty() ? "" : ",") + a;
  return out;
}

// "0.27" for a delay in seconds.
std::string FormatSeconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", seconds);
  return text;
}

// ------------------------------------------------------- shutdown control --

std::atomic<bool> g_stop{false};
std::mutex g_ctx_mu;                         // guards g_ctx
grpc::ClientContext* g_ctx = nullptr;        // the live stream's context
std::mutex g_wait_mu;                        // for the backoff sleep
std::condition_variable g_wait_cv;

void RequestStop() {
  g_stop = true;
  {
    std::lock_guard<std::mutex> lock(g_ctx_mu);
    if (g_ctx != nullptr) g_ctx->TryCancel();  // unblocks the pending Read()
  }
  std::lock_guard<std::mutex> lock(g_wait_mu);
  g_wait_cv.notify_all();
}

// Signals are blocked in every thread (set up before gRPC starts its own) and
// taken here synchronously, so the handler may lock mutexes freely.
void SignalThread(sigset_t set) {
  int sig = 0;
  if (sigwait(&set, &sig) != 0) return;
  Log("received ", (sig == SIGTERM ? "SIGTERM" : "SIGINT"), ", shutting down");
  RequestStop();
  if (sigwait(&set, &sig) == 0) std::_Exit(0);  // a second signal: leave at once
}

// ------------------------------------------------------------ game state --

struct GameInfo {
  v1::Rules rules;
  bool has_rules = false;
  int seat = -1;
  std::vector<std::vector<int>> teams;
  std::vector<std::string> players;
  bool warned_missing_rules = false;
  std::unique_ptr<GameThread> thread;  // decides this game's turns, with its own strategy
};

struct Tally {
  long games = 0, won = 0, lost = 0, drawn = 0, other = 0;
};

// Kept across reconnects: games continue on the server while we are away.
struct Book {
  std::map<std::string, GameInfo> games;
  Tally tally;
};

using Stream = grpc::ClientReaderWriter<v1::BotMessage, v1::ServerMessage>;

// Where every thread's messages go (game threads, keepalive): the live
// session's stream, one write at a time, or nowhere between sessions.
class Outbox {
 public:
  void Open(Stream* stream) {
    std::lock_guard<std::mutex> lock(mu_);
    stream_ = stream;
  }
  // No more writes to this stream (after any in progress); `writes_done`: half-close it too.
  void Close(bool writes_done) {
    std::lock_guard<std::mutex> lock(mu_);
    if (stream_ != nullptr && writes_done) stream_->WritesDone();
    stream_ = nullptr;
  }
  bool Send(const v1::BotMessage& msg) {
    std::lock_guard<std::mutex> lock(mu_);
    return stream_ != nullptr && stream_->Write(msg);
  }

 private:
  std::mutex mu_;
  Stream* stream_ = nullptr;
};

Outbox g_outbox;

const char* StatusName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    default: return "UNRECOGNIZED";
  }
}

// --------------------------------------------------------------- session --

enum class Outcome { kReconnect, kStop, kDone, kFatal };

struct SessionResult {
  Outcome outcome = Outcome::kReconnect;
  bool welcomed = false;
  grpc::StatusCode code = grpc::StatusCode::OK;  // how the stream ended
  // What to do next (connection.h: Decide): the least wait before the next
  // attempt, and whether the server is draining.
  tablanette_bot::ReconnectDecision decision;
  std::string detail;
};

// The server's suggested wait, trailing metadata "retry-after-ms" (0 if none).
// Read after Finish(): only then are the trailers there.
long RetryAfterMs(const grpc::ClientContext& ctx) {
  const auto& trailers = ctx.GetServerTrailingMetadata();
  const auto it = trailers.find("retry-after-ms");
  if (it == trailers.end()) return 0;
  return tablanette_bot::ParseRetryAfterMs(std::string(it->second.data(), it->second.size()));
}

// A server that accepts the connection but never says Welcome (or a host that
// is gone and silently drops packets, so connecting neither fails nor
// succeeds): the session gives up on it after this long, and the bot tries
// the next address.
constexpr std::chrono::seconds kWelcomeTimeout{3};

// Cancels the stream (ctx->TryCancel()) unless Disarm() is called within
// `timeout`. Runs in its own thread because the main thread is blocked in Read().
class WelcomeTimer {
 public:
  WelcomeTimer(grpc::ClientContext* ctx, std::chrono::milliseconds timeout)
      : thread_([this, ctx, timeout] {
          std::unique_lock<std::mutex> lock(mu_);
          if (!cv_.wait_for(lock, timeout, [this] { return disarmed_; })) {
            fired_ = true;
            ctx->TryCancel();  // the pending Read() returns false
          }
        }) {}
  // The Welcome arrived (or the stream already ended): do not cancel.
  void Disarm() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      disarmed_ = true;
    }
    cv_.notify_all();
  }
  // True if the timer cancelled the stream.
  bool Fired() {
    std::lock_guard<std::mutex> lock(mu_);
    return fired_;
  }
  ~WelcomeTimer() {
    Disarm();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool disarmed_ = false;
  bool fired_ = false;
  std::thread thread_;  // last: starts after the members it uses exist
};

// Sends Keepalive every `interval` until stopped or a write fails.
class KeepaliveThread {
 public:
  template <typename Send>
  void Start(std::chrono::milliseconds interval, Send send) {
    if (thread_.joinable()) return;
    thread_ = std::thread([this, interval, send] {
      std::unique_lock<std::mutex> lock(mu_);
      while (!cv_.wait_for(lock, interval, [this] { return stop_; })) {
        lock.unlock();
        v1::BotMessage msg;
        msg.mutable_keepalive()->set_unix_ms(NowUnixMs());
        const bool ok = send(msg);
        lock.lock();
        if (!ok) break;
      }
    });
  }
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  ~KeepaliveThread() { Stop(); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

int TeamOf(const GameInfo* info, int seat) {
  if (info != nullptr) {
    for (size_t t = 0; t < info->teams.size(); ++t)
      for (int s : info->teams[t])
        if (s == seat) return static_cast<int>(t);
    if (info->has_rules && info->rules.partnerships()) return seat % 2;
  }
  return seat;
}

std::string JoinScores(const v1::MatchResult& result) {
  std::string out;
  for (int i = 0; i < result.score_size(); ++i) {
    if (i > 0) out += "-";
    out += std::to_string(result.score(i));
  }
  return out.empty() ? "?" : out;
}

// One connection to one address, from Hello to the end of the stream.
class Session {
 public:
  Session(const Options& opt, const std::string& address, Book& book)
      : opt_(opt), address_(address), book_(book) {}

  SessionResult Run() {
    SessionResult result;
    // A new channel per session: it dials `address_` at once, so the main
    // loop's back-off is the only one.
    auto channel = grpc::CreateChannel(address_, grpc::InsecureChannelCredentials());
    auto stub = v1::BotGateway::NewStub(channel);
    grpc::ClientContext ctx;
    {
      std::lock_guard<std::mutex> lock(g_ctx_mu);
      if (g_stop) {
        result.outcome = Outcome::kStop;
        return result;
      }
      g_ctx = &ctx;
    }
    WelcomeTimer welcome_timer(&ctx, kWelcomeTimeout);
    stream_ = stub->Connect(&ctx);
    g_outbox.Open(stream_.get());

    v1::BotMessage hello;
    hello.mutable_hello()->set_token(opt_.token);
    hello.mutable_hello()->set_bot_name(opt_.name);
    hello.mutable_hello()->set_version(opt_.version);
    hello.mutable_hello()->set_max_games(opt_.max_games);
    for (const char* feature : kFeatures) hello.mutable_hello()->add_features(feature);
    Send(hello);  // on failure the Read below fails too and Finish() says why

    KeepaliveThread keepalive;
    v1::ServerMessage msg;
    bool done = false;
    while (!done && stream_->Read(&msg)) {
      switch (msg.kind_case()) {
        case v1::ServerMessage::kWelcome: {
          const auto& w = msg.welcome();
          result.welcomed = true;
          welcome_timer.Disarm();
          const int ka_ms = w.keepalive_ms() > 0 ? w.keepalive_ms() : 10000;
          Log("connected to ", address_, " as ", w.bot_name(), " (session ", w.session_id(),
              ", server ", w.server_version(), ", keepalive ", ka_ms, " ms, grace ", w.grace_ms(),
              " ms)");
          keepalive.Start(std::chrono::milliseconds(std::max(50, ka_ms / 2)),
                          [this](const v1::BotMessage& m) { return Send(m); });
          break;
        }
        case v1::ServerMessage::kGameStarted:
          OnGameStarted(msg.game_started());
          break;
        case v1::ServerMessage::kTurn:
          OnTurn(msg.turn());
          break;
        case v1::ServerMessage::kPlayRejected:
          OnPlayRejected(msg.play_rejected());
          break;
        case v1::ServerMessage::kGameOver:
          OnGameOver(msg.game_over());
          if (opt_.games > 0 && book_.tally.games >= opt_.games) done = true;
          break;
        case v1::ServerMessage::kKeepalive:
          // A ping: echo it at once (the arena times the round trip; a league
          // that credits latency does not charge it to this bot's clock).
          if (msg.keepalive().echo() != 0) {
            v1::BotMessage echo;
            echo.mutable_keepalive()->set_unix_ms(NowUnixMs());
            echo.mutable_keepalive()->set_echo(msg.keepalive().echo());
            Send(echo);
          }
          break;
        default:
          break;  // a message kind newer than this bot: ignore
      }
    }

    welcome_timer.Disarm();  // the stream has ended: nothing left to time out
    g_outbox.Close(done);    // no writer may be active during Finish()
    if (done) ctx.TryCancel();
    keepalive.Stop();
    const grpc::Status status = stream_->Finish();
    {
      std::lock_guard<std::mutex> lock(g_ctx_mu);
      g_ctx = nullptr;
    }

    result.code = status.error_code();
    result.detail = std::string(StatusName(status.error_code())) +
                    (status.error_message().empty() ? "" : ": " + status.error_message());
    result.decision =
        tablanette_bot::Decide(status.error_code(), status.error_message(), RetryAfterMs(ctx));
    if (!result.welcomed && welcome_timer.Fired())
      result.detail = "no Welcome from " + address_ + " within " +
                      std::to_string(kWelcomeTimeout.count()) + " s (" + result.detail + ")";
    if (done) {
      result.outcome = Outcome::kDone;
    } else if (g_stop) {
      result.outcome = Outcome::kStop;
    } else if (!result.decision.fatal) {
      // UNAVAILABLE (server gone or shutting down), network errors,
      // DEADLINE_EXCEEDED, INTERNAL / UNKNOWN from a broken transport, ABORTED
      // (replaced after going quiet), ALREADY_EXISTS, RESOURCE_EXHAUSTED, ...
      result.outcome = Outcome::kReconnect;
    } else {
      result.outcome = Outcome::kFatal;
      switch (status.error_code()) {
        case grpc::StatusCode::UNAUTHENTICATED:
          result.detail = "the server refused or revoked the token (" + result.detail +
                          "). Check --token / TABLANETTE_TOKEN: `tablanette bot add " + opt_.name +
                          "` prints a bot's token once.";
          break;
        case grpc::StatusCode::PERMISSION_DENIED:
          result.detail = "the token belongs to another bot name (" + result.detail +
                          "). --name (now '" + opt_.name +
                          "') must be the NAME the token was issued for by `tablanette bot add NAME`.";
          break;
        case grpc::StatusCode::INVALID_ARGUMENT:
          result.detail = "the server rejected this bot's Hello (" + result.detail + ").";
          break;
        case grpc::StatusCode::UNIMPLEMENTED:
          result.detail = address_ + " does not serve tablanette.v1.BotGateway (" + result.detail +
                          "). Check --address / TABLANETTE_ADDRESS.";
          break;
        default:
          break;  // Decide() and this switch name the same codes
      }
    }
    return result;
  }

 private:
  static bool Send(const v1::BotMessage& msg) { return g_outbox.Send(msg); }

  GameInfo& Info(const std::string& game_id) { return book_.games[game_id]; }

  const v1::Rules& RulesFor(const std::string& game_id) {
    GameInfo& info = Info(game_id);
    if (info.has_rules) return info.rules;
    if (!info.warned_missing_rules) {
      info.warned_missing_rules = true;
      Log("game ", game_id, ": no rules seen (GameStarted missed?); using tablic defaults");
    }
    return tablanette_bot::DefaultRules();
  }

  void OnGameStarted(const v1::GameStarted& gs) {
    GameInfo& info = Info(gs.game_id());
    info.seat = gs.seat();
    info.has_rules = gs.has_rules();
    if (gs.has_rules()) info.rules = gs.rules();
    info.teams.clear();
    for (const auto& team : gs.teams()) info.teams.emplace_back(team.seats().begin(), team.seats().end());
    info.players.assign(gs.players().begin(), gs.players().end());
    ThreadFor(gs.game_id(), &gs);
    if (opt_.verbose) {
      std::string players;
      for (const auto& p : info.players) players += (players.empty() ? "" : ",") + p;
      Log("game ", gs.game_id(), " started: seat ", gs.seat(), ", preset ",
          gs.has_rules() ? gs.rules().preset() : std::string("?"), ", players ", players);
    }
  }

  // The game's thread, started (with a new strategy) the first time the game is seen.
  GameThread& ThreadFor(const std::string& game_id, const v1::GameStarted* started) {
    GameInfo& info = Info(game_id);
    if (!info.thread) {
      v1::GameStarted missed;  // GameStarted never seen (a reconnect): only the game_id is known
      missed.set_game_id(game_id);
      missed.set_seat(info.seat);
      info.thread = std::make_unique<GameThread>(
          game_id, tablanette_bot::NewGameStrategy(started != nullptr ? *started : missed),
          [](const v1::BotMessage& m) { return g_outbox.Send(m); }, [](const std::string& line) { Log(line); },
          opt_.verbose);
    }
    return *info.thread;
  }

  void OnTurn(const v1::Turn& received) {
    v1::Turn turn = received;
    std::string why;
    if (!UnpackTurn(&turn, &why)) {
      Log("game ", turn.game_id(), " turn ", turn.turn_id(), ": unreadable turn (", why, "); not answering");
      return;
    }
    if (turn.legal_plays_size() == 0) {
      Log("game ", turn.game_id(), " turn ", turn.turn_id(), ": no legal plays offered; not answering");
      return;
    }
    if (Info(turn.game_id()).seat < 0) Info(turn.game_id()).seat = turn.observation().seat();
    const v1::Rules& rules = RulesFor(turn.game_id());
    ThreadFor(turn.game_id(), nullptr).PostTurn(turn, rules);
  }

  void OnPlayRejected(const v1::PlayRejected& rej) {
    Log("game ", rej.game_id(), " turn ", rej.turn_id(), ": play rejected: ", rej.reason());
    const auto it = book_.games.find(rej.game_id());
    if (it != book_.games.end() && it->second.thread) it->second.thread->PostRejected(rej.turn_id());
  }

  void OnGameOver(const v1::GameOver& over) {
    const auto it = book_.games.find(over.game_id());
    const GameInfo* info = it == book_.games.end() ? nullptr : &it->second;
    const int seat = over.seat() >= 0 ? over.seat() : (info != nullptr ? info->seat : -1);
    const int team = TeamOf(info, seat);
    const v1::MatchResult& r = over.result();
    Tally& tally = book_.tally;
    ++tally.games;
    std::string outcome;
    if (r.reason() == "aborted") {
      outcome = "ABORTED";
      ++tally.other;
    } else if (r.winner() < 0) {
      outcome = "DRAW";
      ++tally.drawn;
    } else if (r.winner() == team) {
      outcome = "WON";
      ++tally.won;
    } else {
      outcome = "LOST";
      ++tally.lost;
    }
    std::string extra;
    if (r.reason() == "forfeit") extra = " forfeit_seat=" + std::to_string(r.forfeit_seat());
    Log("game ", over.game_id(), " over: ", outcome, " seat ", seat, " team ", team, " score ",
        JoinScores(r), " reason=", r.reason(), extra, " record=", over.record_id(), " | totals ",
        tally.won, "W ", tally.lost, "L ", tally.drawn, "D", (tally.other ? " " : ""),
        (tally.other ? std::to_string(tally.other) + " aborted" : std::string()), " in ",
        tally.games, " games");
    book_.games.erase(over.game_id());  // its thread stops (a decision in progress is dropped)
  }

  template <typename Cards>
  static std::string Joined(const Cards& cards) {
    std::string out;
    for (const auto& c : cards) out += (out.empty() ? "" : " ") + c;
    return out;
  }

  const Options& opt_;
  const std::string address_;
  Book& book_;
  std::unique_ptr<Stream> stream_;
};

}  // namespace

int main(int argc, char** argv) {
  const Options opt = ParseArgs(argc, argv);

  // Block SIGINT/SIGTERM before any thread exists (gRPC starts its own), and
  // take them in one dedicated thread.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  std::thread(SignalThread, signals).detach();

  Log(opt.version, " (gRPC ", grpc::Version(), "): bot '", opt.name, "' -> ",
      JoinAddresses(opt.addresses), ", max_games ", opt.max_games);

  Book book;
  using Seconds = std::chrono::duration<double>;
  Backoff backoff;
  std::size_t current = 0;  // index into opt.addresses: where the next session goes
  while (!g_stop) {
    Session session(opt, opt.addresses[current], book);
    const SessionResult r = session.Run();
    switch (r.outcome) {
      case Outcome::kStop:
        Log("stopped");
        return 0;
      case Outcome::kDone:
        Log("played ", book.tally.games, " games, exiting");
        return 0;
      case Outcome::kFatal:
        Log("fatal: ", r.detail);
        return 1;
      case Outcome::kReconnect:
        break;
    }
    if (r.welcomed) backoff.Reset();  // a server accepted us: start over at 0.25 s
    // Retry on the next replica of the list (the same one if there is only one).
    current = tablanette_bot::NextAddressIndex(current, opt.addresses.size());
    // A draining server ended our live session: the others are ready, go now.
    // (A draining server that refused a new connection gets the usual delay,
    // so a bot with a single address does not hammer it.) A refusal that
    // passes by itself (ALREADY_EXISTS, RESOURCE_EXHAUSTED, a retry-after-ms
    // hint) waits at least as long as it asks.
    const double backoff_delay = (r.decision.draining && r.welcomed) ? 0.0 : backoff.Next();
    const double delay = std::max(backoff_delay, r.decision.wait_at_least_seconds);
    // One line that says why the bot waits, so a long pause is not a mystery.
    if (r.code == grpc::StatusCode::ALREADY_EXISTS) {
      Log("another session of ", opt.name, " is live; retrying ", opt.addresses[current], " in ",
          FormatSeconds(delay), " s (", r.detail, ")");
    } else if (r.code == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      Log("the server asks ", opt.name, " to slow down; retrying ", opt.addresses[current], " in ",
          FormatSeconds(delay), " s (", r.detail, ")");
    } else {
      Log("stream ended", (r.welcomed ? "" : " before Welcome"), " (", r.detail,
          "); reconnecting to ", opt.addresses[current], " in ", FormatSeconds(delay), " s");
    }
    {
      std::unique_lock<std::mutex> lock(g_wait_mu);
      g_wait_cv.wait_for(lock, Seconds(delay), [] { return g_stop.load(); });
    }
  }
  Log("stopped");
  return 0;
}
