// The augmentation stages, in plain C++: what OpenCV does for MXNet (cv::resize, cv::warpAffine,
// cv::cvtColor), without OpenCV's hand-written SIMD; the compiler vectorises some loops. Their
// times are upper bounds: on the bench machine, OpenCV 4.6 (one thread, its SIMD dispatched at run
// time) took 0.41x, 0.47x and 0.45x of these resize, warp and HLS-jitter times
// (tools/bench/README.md, "bench_decode").
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

#include "tools/bench/decode_pipeline.hpp"

namespace gpuscale::bench {
namespace {

// Bilinear weights in fixed point, as OpenCV's 8-bit resize: 11 fractional bits.
constexpr int kWeightBits = 11, kWeightOne = 1 << kWeightBits;

// Source taps of a bilinear resampling from `in_size` to `out_size` pixels, pixel centres aligned:
// output i reads input (i + 0.5) * in/out - 0.5, between `first` and `second`, `weight` on second.
struct Taps {
  std::vector<int> first, second, weight;
  void compute(int in_size, int out_size) {
    first.resize(out_size);
    second.resize(out_size);
    weight.resize(out_size);
    const float scale = static_cast<float>(in_size) / out_size;
    for (int i = 0; i < out_size; ++i) {
      const float s = std::clamp((i + 0.5f) * scale - 0.5f, 0.f, static_cast<float>(in_size - 1));
      first[i] = static_cast<int>(s);
      second[i] = std::min(first[i] + 1, in_size - 1);
      weight[i] = static_cast<int>(std::lround((s - first[i]) * kWeightOne));
    }
  }
};

// ImageNet's per-channel mean and standard deviation in 0-255 units (the mean is data.py's
// --rgb-mean); their values do not change the cost.
constexpr float kMean[3] = {123.68f, 116.779f, 103.939f};
constexpr float kStd[3] = {58.393f, 57.12f, 57.375f};

}  // namespace

void resize_shorter_side(const Image& in, int short_side, Image& out) {
  const int shorter = std::min(in.width, in.height);
  out.resize(in.width * short_side / shorter, in.height * short_side / shorter);
  thread_local Taps across, down;
  // Input rows `have_upper` and `have_lower` resampled across, in units of 1 / kWeightOne.
  thread_local std::vector<int> upper, lower;
  across.compute(in.width, out.width);
  down.compute(in.height, out.height);
  const std::size_t row_size = static_cast<std::size_t>(out.width) * 3;
  upper.resize(row_size);
  lower.resize(row_size);
  const int out_width = out.width;
  const int* __restrict first = across.first.data();
  const int* __restrict second = across.second.data();
  const int* __restrict weight = across.weight.data();
  const auto resample_row = [&](int y, int* __restrict row) {
    const std::uint8_t* __restrict src = in.row(y);
    for (int x = 0; x < out_width; ++x) {
      const std::uint8_t* a = src + 3 * first[x];
      const std::uint8_t* b = src + 3 * second[x];
      for (int c = 0; c < 3; ++c) row[3 * x + c] = a[c] * kWeightOne + (b[c] - a[c]) * weight[x];
    }
  };
  // Shrinking, consecutive output rows share input rows: each input row is resampled once.
  int have_upper = -1, have_lower = -1;
  for (int y = 0; y < out.height; ++y) {
    const int y0 = down.first[y], y1 = down.second[y];
    if (y0 != have_upper) {
      if (y0 == have_lower) {
        std::swap(upper, lower);
        have_lower = -1;
      } else {
        resample_row(y0, upper.data());
      }
      have_upper = y0;
    }
    if (y1 != have_lower) {
      resample_row(y1, lower.data());
      have_lower = y1;
    }
    // A weighted mean of bytes, so within 0-255 (no clamp); at most 255 << 22, so int32 holds it.
    const int w = down.weight[y];
    const int* __restrict u = upper.data();
    const int* __restrict l = lower.data();
    std::uint8_t* __restrict dst = out.row(y);
    constexpr int kHalf = 1 << (2 * kWeightBits - 1);
    for (std::size_t i = 0; i < row_size; ++i)
      dst[i] = static_cast<std::uint8_t>((u[i] * (kWeightOne - w) + l[i] * w + kHalf) >> (2 * kWeightBits));
  }
}

void crop(const Image& in, int x, int y, int size, Image& out) {
  out.resize(size, size);
  for (int r = 0; r < size; ++r) std::memcpy(out.row(r), in.row(y + r) + 3 * x, static_cast<std::size_t>(size) * 3);
}

void flip_horizontal(Image& image) {
  for (int y = 0; y < image.height; ++y) {
    std::uint8_t* row = image.row(y);
    for (int l = 0, r = image.width - 1; l < r; ++l, --r)
      for (int c = 0; c < 3; ++c) std::swap(row[3 * l + c], row[3 * r + c]);
  }
}

void normalise_chw(const Image& in, float* out) {
  const std::size_t plane = static_cast<std::size_t>(in.width) * in.height;
  for (int c = 0; c < 3; ++c) {
    const float scale = 1 / kStd[c], offset = -kMean[c] / kStd[c];
    float* dst = out + c * plane;
    for (std::size_t i = 0; i < plane; ++i) dst[i] = in.rgb[3 * i + c] * scale + offset;
  }
}

// MXNet's matrix: rotation by `angle`, shear `shear` along x, the aspect ratio changed by `ratio`
// (width and height scaled by hs * ratio and hs, hs = 2 / (1 + ratio)), centre kept in place.
// It maps input to output; each output pixel reads the input at the inverse map, bilinearly.
void warp_affine(const Image& in, const Mxnet3& aug, std::mt19937_64& rng, Image& out) {
  std::uniform_real_distribution<float> uniform(-1, 1);
  const float shear = aug.max_shear * uniform(rng);
  const float angle = std::uniform_int_distribution<int>(-aug.max_rotate_deg, aug.max_rotate_deg)(rng) *
                      std::numbers::pi_v<float> / 180;
  const float ratio = 1 + aug.max_aspect * uniform(rng);
  const float hs = 2 / (1 + ratio), ws = ratio * hs;
  const float cos_a = std::cos(angle), sin_a = std::sin(angle);
  const float m00 = hs * cos_a - shear * sin_a * ws, m01 = hs * sin_a + shear * cos_a * ws;
  const float m10 = -sin_a * ws, m11 = cos_a * ws;
  const float w = static_cast<float>(in.width), h = static_cast<float>(in.height);
  const float tx = (w - (m00 * w + m01 * h)) / 2, ty = (h - (m10 * w + m11 * h)) / 2;
  const float det = m00 * m11 - m01 * m10;
  const float i00 = m11 / det, i01 = -m01 / det, i10 = -m10 / det, i11 = m00 / det;
  const float itx = -(i00 * tx + i01 * ty), ity = -(i10 * tx + i11 * ty);

  // Fixed point, as OpenCV's warp: bilinear weights of 10 bits; coordinates carried in 1/65536 px
  // from pixel to pixel along a row (the step's rounding drifts by < 0.01 px over a row).
  constexpr int kBits = 10, kOne = 1 << kBits, kCoordBits = 16;
  const auto fixed = [](float v) { return static_cast<int>(std::lround(v * (1 << kCoordBits))); };
  const int fill = aug.fill, width = in.width, height = in.height;
  const std::size_t stride = static_cast<std::size_t>(width) * 3;
  const std::uint8_t* __restrict src = in.rgb.data();
  const auto tap = [&](int x, int y, int c) {
    return x < 0 || y < 0 || x >= width || y >= height ? fill : src[y * stride + 3 * x + c];
  };
  out.resize(width, height);
  const int step_x = fixed(i00), step_y = fixed(i10);
  for (int y = 0; y < height; ++y) {
    std::uint8_t* __restrict dst = out.row(y);
    int sx = fixed(i01 * y + itx), sy = fixed(i11 * y + ity);
    for (int x = 0; x < width; ++x, sx += step_x, sy += step_y) {
      const int x0 = sx >> kCoordBits, y0 = sy >> kCoordBits;
      const int fx = (sx >> (kCoordBits - kBits)) & (kOne - 1), fy = (sy >> (kCoordBits - kBits)) & (kOne - 1);
      std::uint8_t* px = dst + 3 * x;
      if (x0 >= 0 && y0 >= 0 && x0 + 1 < width && y0 + 1 < height) {
        const std::uint8_t* a = src + y0 * stride + 3 * x0;
        const std::uint8_t* b = a + stride;
        for (int c = 0; c < 3; ++c) {
          const int top = a[c] * (kOne - fx) + a[3 + c] * fx, bottom = b[c] * (kOne - fx) + b[3 + c] * fx;
          px[c] = static_cast<std::uint8_t>((top * (kOne - fy) + bottom * fy + (1 << (2 * kBits - 1))) >> (2 * kBits));
        }
      } else if (x0 < -1 || y0 < -1 || x0 >= width || y0 >= height) {
        px[0] = px[1] = px[2] = static_cast<std::uint8_t>(fill);
      } else {  // on the edge: missing taps take the fill value (OpenCV's BORDER_CONSTANT)
        for (int c = 0; c < 3; ++c) {
          const int top = tap(x0, y0, c) * (kOne - fx) + tap(x0 + 1, y0, c) * fx;
          const int bottom = tap(x0, y0 + 1, c) * (kOne - fx) + tap(x0 + 1, y0 + 1, c) * fx;
          px[c] = static_cast<std::uint8_t>((top * (kOne - fy) + bottom * fy + (1 << (2 * kBits - 1))) >> (2 * kBits));
        }
      }
    }
  }
}

// OpenCV's 8-bit HLS: H in degrees / 2 (0-180), L and S scaled to 0-255. As MXNet, the shifted
// channels are clamped, hue included (no wrap-around). Back to RGB without branches on the hue
// sector: channel n (0, 8, 4 for R, G, B) is l - a * clamp(min(k - 3, 9 - k), -1, 1),
// k = (n + hue / 30) mod 12, a = s * min(l, 1 - l).
void jitter_hls(Image& image, const Mxnet3& aug, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> uniform(-1, 1);
  const int dh = static_cast<int>(aug.max_h * uniform(rng));
  const int ds = static_cast<int>(aug.max_s * uniform(rng));
  const int dl = static_cast<int>(aug.max_l * uniform(rng));
  constexpr float kToUnit = 1 / 255.f;
  std::uint8_t* const end = image.rgb.data() + image.rgb.size();
  for (std::uint8_t* __restrict px = image.rgb.data(); px != end; px += 3) {
    const float r = px[0] * kToUnit, g = px[1] * kToUnit, b = px[2] * kToUnit;
    const float hi = std::max({r, g, b}), lo = std::min({r, g, b}), range = hi - lo;
    const float light = (hi + lo) / 2;
    float hue = 0, sat = 0;
    if (range > 1e-6f) {
      sat = range / (light < 0.5f ? hi + lo : 2 - hi - lo);
      hue = hi == r ? 60 * (g - b) / range : hi == g ? 120 + 60 * (b - r) / range : 240 + 60 * (r - g) / range;
      if (hue < 0) hue += 360;
    }
    const int h8 = std::min(std::max(static_cast<int>(hue / 2 + 0.5f) + dh, 0), 180);
    const int l8 = std::min(std::max(static_cast<int>(light * 255 + 0.5f) + dl, 0), 255);
    const int s8 = std::min(std::max(static_cast<int>(sat * 255 + 0.5f) + ds, 0), 255);

    const float l = l8 * kToUnit, a = s8 * kToUnit * std::min(l, 1 - l), sector = h8 / 15.f;  // hue / 30
    for (int c = 0; c < 3; ++c) {
      const float n = static_cast<float>((12 - 4 * c) % 12), k = n + sector - 12 * (n + sector >= 12);
      px[c] = static_cast<std::uint8_t>(255 * (l - a * std::max(-1.f, std::min({k - 3, 9 - k, 1.f}))) + 0.5f);
    }
  }
}

}  // namespace gpuscale::bench
