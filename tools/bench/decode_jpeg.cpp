// JPEG decoding (the timed stage), encoding (to make the synthetic set) and the synthetic set.
//
// Sizes [?]: ILSVRC-2012's training images are mostly photographs scaled to 500 px on their long
// side; the mix below (500x375 and 375x500 at 4:3, 500x333 and 333x500 at 3:2, 500x500) is
// an assumption, not a measured histogram: its mean is 467x410 px, 0.19 MP, near the commonly
// quoted means (~400x350 to ~482x415). Decode time grows with the pixel count, so a set with a
// known mean pixel count can be rescaled to another (tools/bench/README.md).
//
// Encoding: most ImageNet training files are quality 96 without chroma subsampling (4:4:4)
// (M. Ehrlich, "Compression in the ImageNet Dataset", Towards Data Science, 2021, a survey of
// every file's quantisation tables and sampling factors); that is the default here.
//
// Content: a photograph's spectrum falls with spatial frequency, and its colour varies more
// slowly than its brightness. The synthetic content is brightness = a lighting gradient + value
// noise at 64, 16 and 4 px scales + per-pixel noise, with a per-image amount of detail, plus
// slowly varying colour offsets. The amplitudes are chosen so that the default set averages
// ~107 KB a file, like ImageNet's (the training tarball, ~138 GB [?], over its 1,281,167 images:
// 108-115 KB): JPEG decode time depends on the coefficient bits to entropy-decode as well as on
// the pixels. The same content at quality 90, 4:2:0 averages ~60 KB; resized to a 480 px shorter
// side first (MXNet's ImageNet .rec, below), ~69 KB.
#include <cstddef>
#include <cstdio>  // before jpeglib.h, which uses size_t and FILE without including them
#include <jpeglib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "tools/bench/decode_pipeline.hpp"

namespace gpuscale::bench {
namespace {

// libjpeg reports errors through a callback that must not return; throwing unwinds through
// libjpeg's C frames, which x86-64 and AArch64 toolchains build with unwind tables.
[[noreturn]] void throw_jpeg_error(j_common_ptr info) {
  char message[JMSG_LENGTH_MAX];
  (*info->err->format_message)(info, message);
  throw std::runtime_error(message);
}

struct Decompressor {
  jpeg_decompress_struct info{};
  jpeg_error_mgr error{};
  explicit Decompressor(const Jpeg& jpeg) {
    info.err = jpeg_std_error(&error);
    error.error_exit = throw_jpeg_error;
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, jpeg.bytes.data(), jpeg.bytes.size());
    jpeg_read_header(&info, TRUE);
  }
  ~Decompressor() { jpeg_destroy_decompress(&info); }
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;
};

std::vector<std::uint8_t> encode(const Image& image, int quality, bool subsample) {
  jpeg_compress_struct info{};
  jpeg_error_mgr error{};
  info.err = jpeg_std_error(&error);
  error.error_exit = throw_jpeg_error;
  jpeg_create_compress(&info);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&info, &buffer, &size);
  info.image_width = static_cast<JDIMENSION>(image.width);
  info.image_height = static_cast<JDIMENSION>(image.height);
  info.input_components = 3;
  info.in_color_space = JCS_RGB;
  jpeg_set_defaults(&info);  // 4:2:0: luma sampled 2x2 against chroma
  jpeg_set_quality(&info, quality, TRUE);
  if (!subsample) info.comp_info[0].h_samp_factor = info.comp_info[0].v_samp_factor = 1;
  jpeg_start_compress(&info, TRUE);
  while (info.next_scanline < info.image_height) {
    JSAMPROW row = const_cast<std::uint8_t*>(image.row(static_cast<int>(info.next_scanline)));
    jpeg_write_scanlines(&info, &row, 1);
  }
  jpeg_finish_compress(&info);
  std::vector<std::uint8_t> bytes(buffer, buffer + size);
  std::free(buffer);
  jpeg_destroy_compress(&info);
  return bytes;
}

struct Shape {
  int width;
  int height;
  double weight;
};
constexpr Shape kImageNetShapes[] = {
    {500, 375, 0.45}, {375, 500, 0.20}, {500, 333, 0.20}, {333, 500, 0.05}, {500, 500, 0.10}};

// Uniform random values on a grid of `cell`-pixel squares, bilinearly interpolated: texture whose
// energy sits at spatial frequencies around 1/cell.
class ValueNoise {
 public:
  ValueNoise(int width, int height, int cell, std::mt19937_64& rng)
      : cell_(cell), columns_(width / cell + 2), values_(static_cast<std::size_t>(columns_) * (height / cell + 2)) {
    std::uniform_real_distribution<float> uniform(-1, 1);
    for (float& v : values_) v = uniform(rng);
  }
  float at(int x, int y) const {
    const int gx = x / cell_, gy = y / cell_;
    const float fx = static_cast<float>(x % cell_) / cell_, fy = static_cast<float>(y % cell_) / cell_;
    const float* top = &values_[static_cast<std::size_t>(gy) * columns_ + gx];
    const float* bottom = top + columns_;
    return (top[0] * (1 - fx) + top[1] * fx) * (1 - fy) + (bottom[0] * (1 - fx) + bottom[1] * fx) * fy;
  }

 private:
  int cell_;
  int columns_;
  std::vector<float> values_;
};

Image synthetic_photo(int width, int height, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> uniform(0, 1);
  const float detail = 0.5f + uniform(rng);  // busy or smooth scenes, 0.5x to 1.5x
  const float light_x = 120 * (uniform(rng) - 0.5f), light_y = 120 * (uniform(rng) - 0.5f);
  const ValueNoise shapes(width, height, 64, rng), texture(width, height, 16, rng),
      fine(width, height, 4, rng), red(width, height, 64, rng), blue(width, height, 64, rng);
  std::normal_distribution<float> grain(0, 1);
  Image image;
  image.resize(width, height);
  for (int y = 0; y < height; ++y) {
    std::uint8_t* out = image.row(y);
    for (int x = 0; x < width; ++x) {
      const float luma = 128 + light_x * (static_cast<float>(x) / width - 0.5f) +
                         light_y * (static_cast<float>(y) / height - 0.5f) + 45 * shapes.at(x, y) +
                         detail * (24 * texture.at(x, y) + 15 * fine.at(x, y) + 6 * grain(rng));
      const float dr = 30 * red.at(x, y), db = 30 * blue.at(x, y);
      const float rgb[3] = {luma + dr, luma - 0.5f * (dr + db), luma + db};
      for (int c = 0; c < 3; ++c) out[3 * x + c] = static_cast<std::uint8_t>(std::clamp(rgb[c], 0.f, 255.f));
    }
  }
  return image;
}

}  // namespace

std::vector<Jpeg> synthetic_jpegs(const SyntheticSet& set) {
  std::mt19937_64 rng(set.seed);
  std::discrete_distribution<std::size_t> pick(
      {kImageNetShapes[0].weight, kImageNetShapes[1].weight, kImageNetShapes[2].weight,
       kImageNetShapes[3].weight, kImageNetShapes[4].weight});
  std::vector<Jpeg> jpegs;
  for (int i = 0; i < set.count; ++i) {
    const Shape shape = kImageNetShapes[pick(rng)];
    Image photo = synthetic_photo(shape.width, shape.height, rng);
    if (set.short_side > 0) {  // as im2rec.py: the stored image resized (bilinear), then re-encoded
      Image resized;
      resize_shorter_side(photo, set.short_side, resized);
      photo = std::move(resized);
    }
    jpegs.push_back({"synthetic-" + std::to_string(i), photo.width, photo.height,
                     encode(photo, set.quality, set.subsample)});
  }
  return jpegs;
}

std::vector<Jpeg> load_jpegs(const std::filesystem::path& dir, int max_count) {
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string ext = entry.path().extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    if (entry.is_regular_file() && (ext == ".jpg" || ext == ".jpeg")) paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  if (paths.size() > static_cast<std::size_t>(max_count)) paths.resize(max_count);
  std::vector<Jpeg> jpegs;
  for (const auto& path : paths) {
    std::ifstream in(path, std::ios::binary);
    Jpeg jpeg{path.filename().string(), 0, 0, {std::istreambuf_iterator<char>(in), {}}};
    try {
      const Decompressor d(jpeg);
      jpeg.width = static_cast<int>(d.info.image_width);
      jpeg.height = static_cast<int>(d.info.image_height);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(path.string() + ": not a JPEG libjpeg can read: " + e.what());
    }
    jpegs.push_back(std::move(jpeg));
  }
  if (jpegs.empty()) throw std::runtime_error(dir.string() + ": no *.jpg or *.jpeg file");
  return jpegs;
}

std::string jpeg_library() {
#define GPUSCALE_STRING(x) #x
#define GPUSCALE_VALUE(x) GPUSCALE_STRING(x)
#ifdef LIBJPEG_TURBO_VERSION
  return "libjpeg-turbo " GPUSCALE_VALUE(LIBJPEG_TURBO_VERSION) " (libjpeg API " GPUSCALE_VALUE(JPEG_LIB_VERSION) ")";
#else
  return "libjpeg (API " GPUSCALE_VALUE(JPEG_LIB_VERSION) ")";
#endif
}

void decode(const Jpeg& jpeg, Image& out) {
  Decompressor d(jpeg);
  d.info.out_color_space = JCS_RGB;  // OpenCV asks for BGR: the same work
  jpeg_start_decompress(&d.info);
  out.resize(static_cast<int>(d.info.output_width), static_cast<int>(d.info.output_height));
  while (d.info.output_scanline < d.info.output_height) {
    JSAMPROW rows[4];  // libjpeg returns up to rec_outbuf_height (<= 4) rows a call
    for (int i = 0; i < 4; ++i)
      rows[i] = out.row(std::min<int>(static_cast<int>(d.info.output_scanline) + i, out.height - 1));
    jpeg_read_scanlines(&d.info, rows, 4);
  }
  jpeg_finish_decompress(&d.info);
}

double entropy_decode(const Jpeg& jpeg) {
  Decompressor d(jpeg);
  jpeg_read_coefficients(&d.info);  // into libjpeg's own arrays, freed with the decompressor
  double blocks = 0;
  for (int c = 0; c < d.info.num_components; ++c) {
    const jpeg_component_info& component = d.info.comp_info[c];
    blocks += static_cast<double>(component.width_in_blocks) * component.height_in_blocks;
  }
  jpeg_finish_decompress(&d.info);
  return blocks * DCTSIZE2 * sizeof(JCOEF);
}

}  // namespace gpuscale::bench
