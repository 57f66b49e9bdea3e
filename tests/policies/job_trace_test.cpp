// check-job's reading of an strace log: the paths a job read outside the contract and its network
// use, with interpreter probes, the job's own files and folders above allowed paths left alone.
#include <doctest/doctest.h>

#include "policies/job_trace.hpp"

using namespace reverify;

namespace {

const TraceScope kScope{
    {"/data/snap", "/data/eval.csv", "/work/in/config.json", "/work/in/seeds.json", "/work/out"},
    "/work/src",
    {}};

JobFinding judge(const std::string& log) {
  return judge_trace(parse_strace(log, "/work/src"), kScope);
}

}  // namespace

TEST_CASE("reads inside the contract, the checkout and the system's folders pass") {
  const auto f = judge(
      "10 execve(\"/usr/bin/python3\", [\"python3\", \"train.py\"], 0x7ff /* 9 vars */) = 0\n"
      "10 openat(AT_FDCWD, \"/etc/ld.so.cache\", O_RDONLY|O_CLOEXEC) = 3\n"
      "10 openat(AT_FDCWD, \"train.py\", O_RDONLY) = 3\n"
      "10 openat(AT_FDCWD, \"/data/snap/shard-00.csv\", O_RDONLY|O_CLOEXEC) = 3\n"
      "10 newfstatat(AT_FDCWD, \"/work\", {st_mode=S_IFDIR|0755, ...}, 0) = 0\n"
      "10 openat(AT_FDCWD, \"/work/out/result.json\", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 4\n"
      "10 newfstatat(AT_FDCWD, \"/root/.local/lib/python3.11\", 0x7ff, 0) = -1 ENOENT (No such "
      "file or directory)\n"
      "10 openat(AT_FDCWD, \"/tmp/scratch-1\", O_RDWR|O_CREAT|O_EXCL, 0600) = 5\n"
      "10 openat(AT_FDCWD, \"/tmp/scratch-1\", O_RDONLY) = 5\n");
  CHECK(f.status == FindingStatus::pass);
  CHECK(f.failure == JobFailure::none);
  REQUIRE(f.details.size() == 1);
  CHECK(f.details[0] == "looked for, absent here: /root/.local/lib/python3.11");
}

TEST_CASE("a file read outside REVERIFY_DATA is a hidden input, named") {
  const auto f = judge(
      "10 newfstatat(AT_FDCWD, \"/data/snap\", {st_mode=S_IFDIR|0755, ...}, 0) = 0\n"
      "11   openat(AT_FDCWD, \"/tmp/label-fixes.csv\", O_RDONLY|O_CLOEXEC <unfinished ...>\n"
      "11   \n"
      "10 openat(AT_FDCWD, \"/data/snap/a.csv\", O_RDONLY) = 3\n"
      "11   <... openat resumed>) = 4\n");
  CHECK(f.status == FindingStatus::fail);
  CHECK(f.failure == JobFailure::hidden_input);
  CHECK(f.summary.find(
            "the job read 1 path(s) outside REVERIFY_DATA, REVERIFY_EVAL and its checkout: "
            "/tmp/label-fixes.csv") == 0);
  CHECK(!f.fix.empty());
}

TEST_CASE("relative paths follow chdir; a folder above the data may be looked at, not listed") {
  CHECK(judge("10 chdir(\"/home/me\") = 0\n"
              "10 openat(AT_FDCWD, \"notes/cache.bin\", O_RDONLY) = 3\n")
            .summary.find("/home/me/notes/cache.bin") != std::string::npos);
  CHECK(judge("10 newfstatat(AT_FDCWD, \"/data\", {st_mode=S_IFDIR, ...}, 0) = 0\n").status ==
        FindingStatus::pass);
  CHECK(judge("10 openat(AT_FDCWD, \"/data\", O_RDONLY|O_DIRECTORY) = 3\n").status ==
        FindingStatus::fail);
  CHECK(judge("10 openat(AT_FDCWD, \"/data/snap/../other/x\", O_RDONLY) = 3\n")
            .summary.find("/data/other/x") != std::string::npos);
}

TEST_CASE("network use is named with its address, refused or not; name-service sockets are not") {
  const auto f = judge(
      "10 connect(3, {sa_family=AF_INET, sin_port=htons(5432), "
      "sin_addr=inet_addr(\"10.0.0.7\")}, 16) = -1 ECONNREFUSED (Connection refused)\n"
      "10 connect(4, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), "
      "inet_pton(AF_INET6, \"2001:db8::1\", &sin6_addr), sin6_scope_id=0}, 28) = 0\n"
      "10 connect(5, {sa_family=AF_UNIX, sun_path=\"/var/run/nscd/socket\"}, 110) = -1 ENOENT\n");
  CHECK(f.status == FindingStatus::fail);
  CHECK(f.summary.find("AF_INET 10.0.0.7:5432 (refused or unreachable here)") != std::string::npos);
  CHECK(f.summary.find("AF_INET6 2001:db8::1:443") != std::string::npos);
  CHECK(f.summary.find("nscd") == std::string::npos);
}

TEST_CASE(
    "a folder the job made is its own, whatever the order of its processes' lines; its "
    "sockets are its processes talking, not the network; a file it only O_CREATs may have "
    "been read before") {
  const auto own = judge(
      "12 newfstatat(AT_FDCWD, \"/tmp/pymp-ab\", {st_mode=S_IFDIR|0700, ...}, 0) = 0\n"
      "11 mkdir(\"/tmp/pymp-ab\", 0700) = 0\n"
      "12 connect(5, {sa_family=AF_UNIX, sun_path=\"/tmp/pymp-ab/listener-x\"}, 110) = 0\n"
      "12 connect(5, {sa_family=AF_UNIX, sun_path=\"/tmp/pymp-ab/listener-x\"}, 110) = 0\n"
      "10 connect(6, {sa_family=AF_UNIX, sun_path=\"/var/run/nscd/socket\"}, 110) = -1 ENOENT\n");
  CHECK(own.status == FindingStatus::pass);
  const auto database = judge(
      "10 connect(5, {sa_family=AF_UNIX, sun_path=\"/var/run/postgresql/.s.PGSQL.5432\"}, 110) "
      "= 0\n"
      "10 connect(5, {sa_family=AF_UNIX, sun_path=\"/var/run/postgresql/.s.PGSQL.5432\"}, 110) "
      "= 0\n");
  CHECK(database.status == FindingStatus::fail);
  CHECK(database.summary.find("AF_UNIX /var/run/postgresql/.s.PGSQL.5432.") != std::string::npos);
  const auto cache = judge(
      "10 openat(AT_FDCWD, \"/tmp/cache.bin\", O_RDONLY) = 3\n"
      "10 openat(AT_FDCWD, \"/tmp/cache.bin\", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3\n");
  CHECK(cache.status == FindingStatus::fail);
}

TEST_CASE("strace's escapes in paths are read back; unknown lines are skipped") {
  const auto trace = parse_strace(
      "10 openat(AT_FDCWD, \"/tmp/caf\\303\\251 \\\"q\\\"\", O_RDONLY) = 3\n"
      "10 +++ exited with 0 +++\n"
      "garbage\n"
      "10 newfstatat(3, \"\", {st_mode=S_IFREG, ...}, AT_EMPTY_PATH) = 0\n"
      "10 openat(3, \"relative-to-fd\", O_RDONLY) = 4\n",
      "/work/src");
  REQUIRE(trace.files.size() == 1);
  CHECK(trace.files[0].path == "/tmp/caf\xc3\xa9 \"q\"");
}

TEST_CASE(
    "a short call's result padded to strace's column is read like any other, resumed or not") {
  // As strace writes them: a result shorter than its column is padded with spaces before "=".
  const auto own = judge(
      "11 mkdir(\"/tmp/pymp-ab\", 0700 <unfinished ...>\n"
      "12 openat(AT_FDCWD, \"/dev/shm/x\", O_RDWR|O_CREAT|O_EXCL, 0600 <unfinished ...>\n"
      "11 <... mkdir resumed>)              = 0\n"
      "12 <... openat resumed>)             = 14\n"
      "12 connect(5, {sa_family=AF_UNIX, sun_path=\"/tmp/pymp-ab/listener-x\"}, 39) = 0\n"
      "12 newfstatat(AT_FDCWD, \"/tmp/pymp-ab\", {st_mode=S_IFDIR|0700, ...}, 0) = 0\n");
  CHECK(own.status == FindingStatus::pass);
  const auto read = judge("10 open(\"/srv/x\", O_RDONLY)    = 3\n");
  CHECK(read.status == FindingStatus::fail);
  CHECK(read.summary.find("/srv/x") != std::string::npos);
}
