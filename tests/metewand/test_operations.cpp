// The one-shot operation messages: strict request and response shapes, the
// role table, and the worker runtime answering requests from memory.
#include <gtest/gtest.h>

#include <unistd.h>

#include "dot/base/byte_stream.h"
#include "dot/base/fd.h"
#include "dot/metewand/operations.h"
#include "dot/metewand/worker_runtime.h"

namespace dot::metewand {
namespace {

Expected<OperationRequest, MessageError> request(const std::string& text) {
  auto doc = json::parse(text);
  EXPECT_TRUE(doc.ok()) << text;
  return decode_operation_request(doc->root());
}

std::string reply_error(Method method, const std::string& text) {
  auto doc = json::parse(text);
  EXPECT_TRUE(doc.ok()) << text;
  auto r = decode_operation_reply(method, doc->root());
  return r.ok() ? "" : r.error().detail;
}

TEST(OperationMessages, RoleTable) {
  EXPECT_TRUE(role_accepts(WorkerRole::DatasetMaterializer, Method::Materialize));
  EXPECT_FALSE(role_accepts(WorkerRole::DatasetMaterializer, Method::Prepare));
  for (Method m : {Method::Prepare, Method::Execute, Method::Reset})
    EXPECT_TRUE(role_accepts(WorkerRole::Implementation, m)) << method_name(m);
  EXPECT_FALSE(role_accepts(WorkerRole::Implementation, Method::Evaluate));
  EXPECT_TRUE(role_accepts(WorkerRole::ProblemEvaluator, Method::Evaluate));
  EXPECT_FALSE(role_accepts(WorkerRole::ProblemEvaluator, Method::Materialize));
  for (WorkerRole r : {WorkerRole::DatasetMaterializer, WorkerRole::Implementation, WorkerRole::ProblemEvaluator}) {
    EXPECT_TRUE(role_accepts(r, Method::Shutdown));
    EXPECT_EQ(role_methods(r).back(), Method::Shutdown);
  }
}

TEST(OperationMessages, PublicExampleRequestsDecodeAndEncodeBack) {
  const char* examples[] = {
      R"({"dataset_parameters":{"rows":100},"dataset_seed":17,"id":"1","method":"materialize","output_dir":"/private/dataset-output","source_dir":"/private/source"})",
      R"({"dataset_dir":"/private/dataset","id":"1","implementation_parameters":{"solver":"fast"},"implementation_seed":23,"method":"prepare","problem_contract_id":"mw1-problem-contract-abc","problem_parameters":{"lambda":0.1}})",
      R"({"id":"2","method":"execute","result_dir":"/private/result"})",
      R"({"id":"3","method":"reset"})",
      R"({"dataset_dir":"/private/dataset","id":"1","method":"evaluate","metrics_path":"/private/metrics.json","problem_contract_id":"mw1-problem-contract-abc","problem_parameters":{"lambda":0.1},"result_dir":"/private/result"})",
      R"({"id":"4","method":"shutdown"})",
  };
  for (const char* text : examples) {
    auto r = request(text);
    ASSERT_TRUE(r.ok()) << text << ": " << r.error().message();
    auto line = encode_message(r->to_node());
    ASSERT_TRUE(line.ok());
    EXPECT_EQ(*line, std::string(text) + "\n");
  }
}

TEST(OperationMessages, RequestShapesAreStrict) {
  struct Case {
    const char* text;
    const char* why;
  } cases[] = {
      {R"({"id":"1","method":"reset","x":1})", "unknown member"},
      {R"({"id":"","method":"reset"})", "empty id"},
      {R"({"id":1,"method":"reset"})", "numeric id"},
      {R"({"id":"1","method":"hello"})", "hello is not an operation"},
      {R"({"id":"1","method":"fly"})", "unknown method"},
      {R"({"id":"1","method":"execute"})", "missing result_dir"},
      {R"({"id":"1","method":"execute","result_dir":""})", "empty path"},
      {R"({"id":"1","method":"execute","result_dir":7})", "path not a string"},
      {R"({"dataset_parameters":[],"dataset_seed":1,"id":"1","method":"materialize","output_dir":"o","source_dir":"s"})", "parameters not an object"},
      {R"({"dataset_parameters":{},"dataset_seed":9007199254740992,"id":"1","method":"materialize","output_dir":"o","source_dir":"s"})", "unsafe seed"},
      {R"({"dataset_parameters":{},"dataset_seed":-1,"id":"1","method":"materialize","output_dir":"o","source_dir":"s"})", "negative seed"},
      {R"({"dataset_parameters":{},"dataset_seed":1.5,"id":"1","method":"materialize","output_dir":"o","source_dir":"s"})", "fractional seed"},
      {R"([1])", "not an object"},
  };
  for (const auto& c : cases) {
    auto r = request(c.text);
    EXPECT_FALSE(r.ok()) << c.why;
    if (!r.ok()) {
      EXPECT_EQ(r.error().name(), "InvalidMessage");
    }
  }
  // The largest safe seed is accepted.
  EXPECT_TRUE(request(R"({"dataset_parameters":{},"dataset_seed":9007199254740991,"id":"1","method":"materialize","output_dir":"o","source_dir":"s"})").ok());
}

TEST(OperationMessages, ResponseShapesAreStrict) {
  EXPECT_EQ(reply_error(Method::Materialize, R"({"dataset":{"manifest":"dataset-manifest.json"},"id":"1","ok":true})"), "");
  EXPECT_EQ(reply_error(Method::Execute, R"({"id":"2","implementation_time_ns":18342011,"ok":true,"result":{"manifest":"result.json"},"statistics":{"iterations":37}})"), "");
  EXPECT_EQ(reply_error(Method::Execute, R"({"id":"2","implementation_time_ns":null,"ok":true,"result":{"manifest":"result.json"},"statistics":{}})"), "");
  for (Method m : {Method::Prepare, Method::Reset, Method::Evaluate, Method::Shutdown})
    EXPECT_EQ(reply_error(m, R"({"id":"1","ok":true})"), "") << method_name(m);
  EXPECT_EQ(reply_error(Method::Prepare, R"({"error":{"code":"operation_failed","details":{"iterations":100},"message":"The implementation did not converge."},"id":"2","ok":false})"), "");

  EXPECT_NE(reply_error(Method::Shutdown, R"({"id":"1","ok":true,"x":1})"), "");
  EXPECT_NE(reply_error(Method::Shutdown, R"({"id":"1"})"), "");
  EXPECT_NE(reply_error(Method::Materialize, R"({"id":"1","ok":true})"), "");
  EXPECT_NE(reply_error(Method::Materialize, R"({"dataset":{"manifest":""},"id":"1","ok":true})"), "");
  EXPECT_NE(reply_error(Method::Materialize, R"({"dataset":{"manifest":"m","x":1},"id":"1","ok":true})"), "");
  EXPECT_NE(reply_error(Method::Execute, R"({"id":"2","ok":true,"result":{"manifest":"r"},"statistics":{}})"), "");
  EXPECT_NE(reply_error(Method::Execute, R"({"id":"2","implementation_time_ns":9007199254740992,"ok":true,"result":{"manifest":"r"},"statistics":{}})"), "");
  EXPECT_NE(reply_error(Method::Execute, R"({"id":"2","implementation_time_ns":null,"ok":true,"result":{"manifest":"r"},"statistics":[]})"), "");
  EXPECT_NE(reply_error(Method::Prepare, R"({"error":{"code":"boom","message":"m"},"id":"2","ok":false})"), "");
  EXPECT_NE(reply_error(Method::Prepare, R"({"error":{"code":"internal_error","message":""},"id":"2","ok":false})"), "");
  EXPECT_NE(reply_error(Method::Prepare, R"({"error":{"code":"internal_error","details":[],"message":"m"},"id":"2","ok":false})"), "");
}

// The runtime against requests written into a pipe: every role's method is
// answered, another role's is unsupported_operation, a bad shape is
// invalid_request, and shutdown ends serving with its acknowledgment.
TEST(WorkerRuntime, AnswersTheRoleAndShutdown) {
  std::string requests =
      R"({"id":"1","method":"reset"})" "\n"
      R"({"id":"2","method":"evaluate","dataset_dir":"d"})" "\n"
      R"({"id":"3","method":"execute","result_dir":"r"})" "\n"
      R"({"id":"4","method":"materialize","dataset_parameters":{},"dataset_seed":1,"output_dir":"o","source_dir":"s"})" "\n"
      R"({"id":"5","method":"hello"})" "\n"
      R"({"id":"6","method":"shutdown"})" "\n"
      R"({"id":"7","method":"reset"})" "\n";
  int in[2], out[2];
  ASSERT_EQ(::pipe(in), 0);
  ASSERT_EQ(::pipe(out), 0);
  ASSERT_TRUE(write_all(in[1], requests).ok());
  ::close(in[1]);
  FdSource source(in[0], "requests");
  FrameReader reader(source);
  WorkerHandlers h;
  h.reset = [](const OperationRequest&) -> OperationResult { return OperationSuccess{}; };
  h.execute = [](const OperationRequest& r) -> OperationResult {
    OperationSuccess s;
    s.manifest = "result.json";
    s.statistics.set("dir", *r.params.get("result_dir"));
    return s;
  };
  auto served = serve_requests(reader, out[1], WorkerRole::Implementation, h);
  ::close(out[1]);
  ::close(in[0]);
  ASSERT_TRUE(served.ok()) << served.error().message();
  auto answers = read_all(out[0], 1 << 20).value();
  ::close(out[0]);
  EXPECT_EQ(answers,
            R"({"id":"1","ok":true})" "\n"
            R"({"error":{"code":"unsupported_operation","message":"the implementation role does not take evaluate"},"id":"2","ok":false})" "\n"
            R"({"id":"3","implementation_time_ns":null,"ok":true,"result":{"manifest":"result.json"},"statistics":{"dir":"r"}})" "\n"
            R"({"error":{"code":"unsupported_operation","message":"the implementation role does not take materialize"},"id":"4","ok":false})" "\n"
            R"({"error":{"code":"invalid_request","details":{"method":"hello"},"message":"hello is only the first request"},"id":"5","ok":false})" "\n"
            R"({"id":"6","ok":true})" "\n");
}

TEST(WorkerRuntime, TheRequestStreamEndingBeforeShutdownIsAnError) {
  int in[2], out[2];
  ASSERT_EQ(::pipe(in), 0);
  ASSERT_EQ(::pipe(out), 0);
  ASSERT_TRUE(write_all(in[1], R"({"id":"1","method":"prepare"})" "\n").ok());
  ::close(in[1]);
  FdSource source(in[0], "requests");
  FrameReader reader(source);
  auto served = serve_requests(reader, out[1], WorkerRole::Implementation, WorkerHandlers{});
  ::close(out[1]);
  ::close(in[0]);
  ASSERT_FALSE(served.ok());
  EXPECT_EQ(served.error().kind, "request_stream_ended");
  // The malformed prepare was still answered, with its method named.
  auto answers = read_all(out[0], 1 << 20).value();
  ::close(out[0]);
  EXPECT_NE(answers.find(R"("code":"invalid_request","details":{"method":"prepare"})"), std::string::npos) << answers;
}

}  // namespace
}  // namespace dot::metewand
