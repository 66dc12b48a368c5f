"""A Gaussian blur of a photograph in CUDA C: a 2-D convolution, done as two
1-D passes (the Gaussian is separable: rows, then columns).

The photograph is scikit-image's "camera", which ships inside the
scikit-image package (nothing is downloaded).  Each thread of a 16 x 16 block
computes one output pixel; a pixel outside the image takes the value of the
nearest edge pixel (clamp to edge).  The original and the blurred image are
saved as PNG files in --out.

    python examples/gaussian_blur.py --device cpu --out /tmp
"""
import argparse
import math
import os

import numpy as np

import cudakit as ck

SOURCE = r"""
extern "C" __global__ void blur_pass(float *out, const float *in, const float *weights, int radius,
                                     int height, int width, int along_rows)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height)
        return;

    float sum = 0.0f;
    for (int k = -radius; k <= radius; k++) {
        const int xx = along_rows ? min(max(x + k, 0), width - 1) : x;
        const int yy = along_rows ? y : min(max(y + k, 0), height - 1);
        sum += weights[k + radius] * in[yy * width + xx];
    }
    out[y * width + x] = sum;
}
"""


def gaussian_weights(sigma):
    """The normalised 1-D Gaussian of radius ceil(3 sigma)."""
    radius = math.ceil(3 * sigma)
    w = np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2)
    return (w / w.sum()).astype(np.float32)


def main(device=None, sigma=3.0, out_dir="."):
    from skimage import data, io

    photo = data.camera()                                  # 512 x 512 uint8, bundled
    image = ck.asarray(photo.astype(np.float32) / 255, device=device)
    weights = gaussian_weights(sigma)
    radius = len(weights) // 2
    height, width = image.shape

    blur_pass = ck.RawKernel(SOURCE, "blur_pass")
    block = (16, 16)
    grid = ((width + 15) // 16, (height + 15) // 16)
    w = ck.asarray(weights, device=device)
    tmp = ck.empty_like(image)
    blurred = ck.empty_like(image)
    blur_pass(grid, block, (tmp, image, w, radius, height, width, 1))       # along rows
    blur_pass(grid, block, (blurred, tmp, w, radius, height, width, 0))     # along columns

    os.makedirs(out_dir, exist_ok=True)
    before = os.path.join(out_dir, "camera.png")
    after = os.path.join(out_dir, "camera_blurred.png")
    io.imsave(before, photo)
    io.imsave(after, np.clip(np.rint(ck.asnumpy(blurred) * 255), 0, 255).astype(np.uint8))
    print(f"gaussian blur on {blurred.device}: {height}x{width} photograph, sigma {sigma} "
          f"({len(weights)} taps per pass), saved {before} and {after}")
    return image, weights, blurred


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], default=None,
                        help="where the arrays live (default: the default device)")
    parser.add_argument("--sigma", type=float, default=3.0, help="the Gaussian's standard deviation in pixels")
    parser.add_argument("--out", default=".", help="folder for the PNG files (default: the current one)")
    args = parser.parse_args()
    main(args.device, args.sigma, args.out)
