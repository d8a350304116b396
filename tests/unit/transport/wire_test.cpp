#include "transport/wire.hpp"

#include <gtest/gtest.h>

#include "fleetsim/random.hpp"

namespace fleetsim::transport {
namespace {

Message sample() {
  Message m;
  m.flow = 7;
  m.kind = MessageKind::kData;
  m.timestamp = 123456789;
  m.period = 1000;
  m.payload = {1, 2, 3, 4, 5};
  return m;
}

std::string refusal(const std::vector<std::uint8_t>& bytes) {
  auto r = decode(bytes.data(), bytes.size());
  if (auto* e = std::get_if<WireError>(&r)) return e->reason;
  return "";
}

TEST(Wire, RoundTrip) {
  auto bytes = encode(sample());
  ASSERT_EQ(bytes.size(), kWireHeaderBytes + 5);
  auto r = decode(bytes.data(), bytes.size());
  ASSERT_TRUE(std::holds_alternative<Message>(r));
  const auto& m = std::get<Message>(r);
  EXPECT_EQ(m.flow, 7u);
  EXPECT_EQ(m.timestamp, 123456789);
  EXPECT_EQ(m.period, 1000);
  EXPECT_EQ(m.payload, sample().payload);
  EXPECT_EQ(m.run, 0u);
  std::vector<std::uint8_t> stamped;
  encode(sample(), stamped, 0xfedcba9876543210ULL);
  auto s = decode(stamped.data(), stamped.size());
  ASSERT_TRUE(std::holds_alternative<Message>(s));
  EXPECT_EQ(std::get<Message>(s).run, 0xfedcba9876543210ULL);
}

TEST(Wire, LayoutIsLittleEndianAndVersioned) {
  auto bytes = encode(sample());
  EXPECT_EQ(bytes[0], 'F');
  EXPECT_EQ(bytes[1], 'S');
  EXPECT_EQ(bytes[2], 'T');
  EXPECT_EQ(bytes[3], 'M');
  EXPECT_EQ(bytes[4], kWireVersion);
  EXPECT_EQ(bytes[5], 0);
  EXPECT_EQ(bytes[8], 7);   // flow
  EXPECT_EQ(bytes[12], 5);  // payload length
  std::vector<std::uint8_t> stamped;
  encode(sample(), stamped, 0x0102030405060708ULL);
  EXPECT_EQ(stamped[32], 0x08);  // run id, little-endian
  EXPECT_EQ(stamped[39], 0x01);
}

TEST(Wire, RefusesTruncatedWrongVersionAndMalformed) {
  auto good = encode(sample());
  EXPECT_NE(refusal({good.begin(), good.begin() + 10}).find("truncated"), std::string::npos);
  auto v = good;
  v[4] = 9;
  EXPECT_NE(refusal(v).find("version 9"), std::string::npos);
  auto r = decode(v.data(), v.size());
  ASSERT_TRUE(std::holds_alternative<WireError>(r));
  EXPECT_EQ(std::get<WireError>(r).other_version, 9);
  auto magic = good;
  magic[0] = 'X';
  EXPECT_NE(refusal(magic).find("magic"), std::string::npos);
  auto shorter = good;
  shorter.pop_back();
  EXPECT_NE(refusal(shorter).find("length mismatch"), std::string::npos);
  auto kind = good;
  kind[6] = 77;
  EXPECT_NE(refusal(kind).find("kind"), std::string::npos);
  auto huge = good;
  huge[15] = 0x7f;  // a corrupted length must not allocate gigabytes
  EXPECT_NE(refusal(huge).find("exceeds"), std::string::npos);
  auto period = sample();
  period.period = 0;
  EXPECT_NE(refusal(encode(period)).find("period"), std::string::npos);
}

// Event flows' null messages: flag 0x01 of a data message without payload; the flag on a
// message with a payload, on another kind, or any other flag bit is refused.
TEST(Wire, NullMessagesRoundTripAndMalformedOnesAreRefused) {
  Message null_message = sample();
  null_message.payload.clear();
  null_message.null = true;
  auto bytes = encode(null_message);
  EXPECT_EQ(bytes[7], 0x01);
  auto r = decode(bytes.data(), bytes.size());
  ASSERT_TRUE(std::holds_alternative<Message>(r)) << std::get<WireError>(r).reason;
  EXPECT_TRUE(std::get<Message>(r).null);
  EXPECT_EQ(std::get<Message>(r).timestamp, null_message.timestamp);
  EXPECT_EQ(std::get<Message>(r).period, null_message.period);
  auto plain = encode(sample());
  EXPECT_EQ(plain[7], 0x00);
  EXPECT_FALSE(std::get<Message>(decode(plain.data(), plain.size())).null);

  auto with_payload = plain;
  with_payload[7] = 0x01;
  EXPECT_NE(refusal(with_payload).find("null message"), std::string::npos);
  auto step = bytes;
  step[6] = 2;  // a lockstep order cannot be null
  EXPECT_NE(refusal(step).find("null message"), std::string::npos);
  auto other_flag = bytes;
  other_flag[7] = 0x03;
  EXPECT_NE(refusal(other_flag).find("unknown flags 0x03"), std::string::npos);
}

TEST(Wire, RandomBytesNeverCrash) {
  CounterRng rng(1, 0, 0, RandomStream::kUser);
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<std::uint8_t> bytes(rng.below(80));
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng.next());
    // Half of the cases start from a valid header, so the deeper checks are reached too.
    if (i % 2 == 0 && bytes.size() >= 8) {
      auto good = encode(sample());
      std::copy(good.begin(), good.begin() + 8, bytes.begin());
    }
    auto r = decode(bytes.data(), bytes.size());
    accepted += std::holds_alternative<Message>(r);
  }
  EXPECT_EQ(accepted, 0);
}

}  // namespace
}  // namespace fleetsim::transport
