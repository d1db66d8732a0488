// Reference runner for fp8lab bundles (schema fp8lab.bundle/1): the whole loop in one file.
//
//   fp8lab export --gate G1 --out DIR
//   g++ -O2 -std=c++17 -I<fp8lab>/abi run_bundle.cpp my_kernel.cpp -o run_bundle
//   ./run_bundle DIR
//   fp8lab gates --gate G1 --outputs DIR
//
// It reads DIR/bundle.txt (no JSON library): a header line "SCHEMA GATE N", then one
// case per line. G1: "scale_hex input_dtype count input output name...", and it calls
// fp8lab_quant. G3: "m n k a b s_in_hex s_w_hex out_dtype output name...", and it calls
// fp8lab_matmul. GQ (header "SCHEMA GQ N SCHEME RULE"): "input_dtype m k global_amax_hex
// input codes scales scales_dtype scales_count name...", and it calls fp8lab_scheme_quant,
// or fp8lab_nvfp4_quant when global_amax_hex is not "-". All come from
// fp8lab/abi/fp8lab_kernel.h; link the one your gate needs (the others are weak references). A kernel error (non-zero return) writes no output for
// that case, so the gate FAILs it as missing; the runner then exits 1.
#include "fp8lab_kernel.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#pragma weak fp8lab_quant
#pragma weak fp8lab_matmul
#pragma weak fp8lab_scheme_quant
#pragma weak fp8lab_nvfp4_quant

namespace {

bool read_file(const std::string &path, std::vector<unsigned char> &data, size_t want) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    return data.size() == want;
}

bool write_file(const std::string &path, const void *data, size_t size) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(static_cast<const char *>(data), static_cast<std::streamsize>(size));
    return static_cast<bool>(out);
}

float from_hex(const std::string &text) {  // "0x3f000000" -> the float32 with those bits
    uint32_t bits = static_cast<uint32_t>(std::strtoul(text.c_str(), nullptr, 16));
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}

std::string rest_of_line(std::istringstream &fields) {
    std::string name;
    std::getline(fields >> std::ws, name);
    return name;
}

// One G1 case; returns false (and says why) if it wrote no output.
bool run_g1(const std::string &dir, std::istringstream &fields) {
    std::string scale_hex, dtype, input, output;
    int64_t count = 0;
    fields >> scale_hex >> dtype >> count >> input >> output;
    const std::string name = rest_of_line(fields);
    const int32_t x_dtype = dtype == "bfloat16" ? FP8LAB_X_BFLOAT16 : FP8LAB_X_FLOAT32;
    const size_t width = x_dtype == FP8LAB_X_BFLOAT16 ? 2 : 4;
    std::vector<unsigned char> x;
    if (!read_file(dir + "/" + input, x, static_cast<size_t>(count) * width)) {
        std::cerr << "case " << name << ": cannot read " << count << " values from " << input
                  << "\n";
        return false;
    }
    std::vector<uint8_t> out(static_cast<size_t>(count));
    const int32_t rc = fp8lab_quant(x.data(), x_dtype, count, from_hex(scale_hex), out.data());
    if (rc != 0) {
        std::cerr << "case " << name << ": fp8lab_quant returned " << rc << "\n";
        return false;
    }
    return write_file(dir + "/" + output, out.data(), out.size());
}

// One G3 case; returns false (and says why) if it wrote no output.
bool run_g3(const std::string &dir, std::istringstream &fields) {
    int64_t m = 0, n = 0, k = 0;
    std::string a_path, b_path, s_in, s_w, dtype, output;
    fields >> m >> n >> k >> a_path >> b_path >> s_in >> s_w >> dtype >> output;
    const std::string name = rest_of_line(fields);
    std::vector<unsigned char> a, b;
    if (!read_file(dir + "/" + a_path, a, static_cast<size_t>(m * k)) ||
        !read_file(dir + "/" + b_path, b, static_cast<size_t>(n * k))) {
        std::cerr << "case " << name << ": cannot read " << a_path << " or " << b_path << "\n";
        return false;
    }
    const int32_t out_dtype = dtype == "bfloat16" ? FP8LAB_OUT_BFLOAT16 : FP8LAB_OUT_FLOAT32;
    std::vector<unsigned char> out(static_cast<size_t>(m * n) * (out_dtype ? 2 : 4));
    const int32_t rc = fp8lab_matmul(a.data(), b.data(), m, n, k, from_hex(s_in), from_hex(s_w),
                                     out_dtype, out.data());
    if (rc != 0) {
        std::cerr << "case " << name << ": fp8lab_matmul returned " << rc << "\n";
        return false;
    }
    return write_file(dir + "/" + output, out.data(), out.size());
}

// One GQ case; returns false (and says why) if it wrote no output.
bool run_gq(const std::string &dir, std::istringstream &fields) {
    int64_t m = 0, k = 0, n_scales = 0;
    std::string dtype, global_hex, input, codes_path, scales_path, scales_dtype;
    fields >> dtype >> m >> k >> global_hex >> input >> codes_path >> scales_path >>
        scales_dtype >> n_scales;
    const std::string name = rest_of_line(fields);
    const int32_t x_dtype = dtype == "bfloat16" ? FP8LAB_X_BFLOAT16 : FP8LAB_X_FLOAT32;
    const size_t width = x_dtype == FP8LAB_X_BFLOAT16 ? 2 : 4;
    std::vector<unsigned char> x;
    if (!read_file(dir + "/" + input, x, static_cast<size_t>(m * k) * width)) {
        std::cerr << "case " << name << ": cannot read " << m << "x" << k << " from " << input
                  << "\n";
        return false;
    }
    std::vector<uint8_t> codes(static_cast<size_t>(m * k));
    std::vector<unsigned char> scales(static_cast<size_t>(n_scales) *
                                      (scales_dtype == "float32" ? 4 : 1));
    const bool nvfp4 = global_hex != "-";
    if (nvfp4 ? !fp8lab_nvfp4_quant : !fp8lab_scheme_quant) {
        std::cerr << "case " << name << ": link "
                  << (nvfp4 ? "fp8lab_nvfp4_quant" : "fp8lab_scheme_quant") << "\n";
        return false;
    }
    const int32_t rc =
        nvfp4 ? fp8lab_nvfp4_quant(x.data(), x_dtype, m, k, from_hex(global_hex), codes.data(),
                                   scales.data())
              : fp8lab_scheme_quant(x.data(), x_dtype, m, k, codes.data(), scales.data());
    if (rc != 0) {
        std::cerr << "case " << name << ": the kernel returned " << rc << "\n";
        return false;
    }
    return write_file(dir + "/" + codes_path, codes.data(), codes.size()) &&
           write_file(dir + "/" + scales_path, scales.data(), scales.size());
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::cerr << "usage: run_bundle DIR (a directory written by fp8lab export)\n";
        return 2;
    }
    const std::string dir = argv[1];
    std::ifstream sidecar(dir + "/bundle.txt");
    std::string line, schema, gate;
    long cases = 0;
    if (!std::getline(sidecar, line) || !(std::istringstream(line) >> schema >> gate >> cases) ||
        schema != "fp8lab.bundle/1") {
        std::cerr << "run_bundle: " << dir << "/bundle.txt is not an fp8lab.bundle/1 sidecar\n";
        return 2;
    }
    if (gate != "G1" && gate != "G3" && gate != "GQ") {
        std::cerr << "run_bundle: unknown gate " << gate << " in " << dir << "/bundle.txt\n";
        return 2;
    }
    if ((gate == "G1" && !fp8lab_quant) || (gate == "G3" && !fp8lab_matmul)) {
        std::cerr << "run_bundle: a " << gate << " bundle needs "
                  << (gate == "G1" ? "fp8lab_quant" : "fp8lab_matmul") << "; link a kernel\n";
        return 2;
    }
    long done = 0, failed = 0;
    while (std::getline(sidecar, line)) {
        std::istringstream fields(line);
        const bool ok = gate == "G1"   ? run_g1(dir, fields)
                        : gate == "G3" ? run_g3(dir, fields)
                                       : run_gq(dir, fields);
        done += 1;
        failed += !ok;
    }
    if (done != cases) {
        std::cerr << "run_bundle: the sidecar lists " << done << " cases, its header " << cases
                  << "\n";
        return 2;
    }
    std::cout << gate << ": " << done - failed << " of " << done << " outputs written\n";
    return failed ? 1 : 0;
}
