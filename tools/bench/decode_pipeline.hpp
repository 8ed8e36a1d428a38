// The stages bench_decode times: what one input-pipeline thread (MXNet's ImageRecordIter, one of
// its decode threads) does to each training image, and the JPEG sets it runs over.
//
// Contract: every stage writes into an output it is given, reusing that output's memory, so that a
// timed loop allocates nothing after its first image; images are 8-bit RGB, rows packed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace gpuscale::bench {

struct Image {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> rgb;  // width * height * 3 bytes, row after row

  void resize(int w, int h) {
    width = w;
    height = h;
    rgb.resize(static_cast<std::size_t>(w) * h * 3);
  }
  std::uint8_t* row(int y) { return rgb.data() + static_cast<std::size_t>(y) * width * 3; }
  const std::uint8_t* row(int y) const { return rgb.data() + static_cast<std::size_t>(y) * width * 3; }
};

struct Jpeg {
  std::string name;  // a file name, or "synthetic-N"
  int width = 0;     // pixels, from the JPEG header
  int height = 0;
  std::vector<std::uint8_t> bytes;
};

// A deterministic set of synthetic photographs (decode_jpeg.cpp has the size distribution and how
// the content is made to compress like photographs).
struct SyntheticSet {
  int count = 200;
  std::uint64_t seed = 2012;
  // As ImageNet's own files mostly are (decode_jpeg.cpp); MXNet's im2rec.py re-encodes with
  // OpenCV: --quality (90 in MXNet's ImageNet recipe) and 4:2:0.
  int quality = 96;        // libjpeg quality, 1-100
  bool subsample = false;  // chroma 4:2:0 (libjpeg's and OpenCV's default), else 4:4:4
  int short_side = 0;      // 0: ImageNet's stored sizes; N: resized so the shorter side is N
                           // pixels, as MXNet's im2rec.py --resize N packs a .rec file
};

std::vector<Jpeg> synthetic_jpegs(const SyntheticSet& set);
// Every *.jpg / *.jpeg file of `dir` (not its subfolders), by name, at most `max_count`.
std::vector<Jpeg> load_jpegs(const std::filesystem::path& dir, int max_count);
// The name and version of the JPEG library this program was built against.
std::string jpeg_library();

// --- the stages ----------------------------------------------------------------------------
void decode(const Jpeg& jpeg, Image& out);
// Huffman (entropy) decoding alone, to the quantised DCT coefficients (libjpeg's
// jpeg_read_coefficients): the host's share of a GPU decoder's work (nvJPEG decodes the Huffman
// stream on the CPU and the coefficients on the GPU). Returns the coefficient bytes (int16 per
// coefficient), what the host copies to the GPU.
double entropy_decode(const Jpeg& jpeg);
// Bilinear (pixel centres aligned, as OpenCV's INTER_LINEAR) to `short_side` on the shorter side.
void resize_shorter_side(const Image& in, int short_side, Image& out);
void crop(const Image& in, int x, int y, int size, Image& out);
void flip_horizontal(Image& image);
// (value - mean) / std per channel, written planar (CHW) as float32: one image of a batch.
void normalise_chw(const Image& in, float* out);

// MXNet's augmentation level 3 (example/image-classification train_imagenet.py with
// common/data.py set_data_aug_level(3)), as src/io/image_aug_default.cc applies it.
struct Mxnet3 {
  int max_rotate_deg = 10;
  float max_shear = 0.1f;
  float max_aspect = 0.25f;
  int max_h = 36;  // hue, OpenCV's 8-bit HLS units (0-180)
  int max_s = 50;  // saturation, 0-255
  int max_l = 50;  // lightness, 0-255
  std::uint8_t fill = 127;  // data.py's fill_value, where the warp uncovers no pixel
};
// A random rotation, shear and aspect-ratio change of the whole image, bilinear, same size out.
void warp_affine(const Image& in, const Mxnet3& aug, std::mt19937_64& rng, Image& out);
// A random shift of hue, lightness and saturation in HLS space, in place.
void jitter_hls(Image& image, const Mxnet3& aug, std::mt19937_64& rng);

}  // namespace gpuscale::bench
