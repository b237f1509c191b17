"""
    Mpcf

Exact Lp distance and L2 kernel matrices between piecewise constant functions
(PCFs) and piecewise linear functions (PLFs), computed by libmpcf.

A PCF is a list of breakpoints `(t_k, v_k)` with finite, strictly increasing
times: `f(t) = 0` before `t_1`, `v_k` on `[t_k, t_{k+1})` and the last value
for ever after the last breakpoint. Collections of PCFs live in a
[`PcfCollection`](@ref); [`pdist`](@ref), [`cdist`](@ref),
[`l2_kernel`](@ref), [`lp_distance`](@ref) and [`lp_norm`](@ref) compute on
them. [`plfs`](@ref) builds a collection of PLFs (linear interpolation between
breakpoints); [`landscape`](@ref) and [`silhouette`](@ref) turn persistence
barcodes into PLFs, and `components = true` computes over objects of several
functions (the `k` landscapes of one barcode).

The library is found at load time from `ENV["MPCF_LIBRARY"]` (a path to
`libmpcf.so`) or else on the system library search path.
"""
module Mpcf

using Libdl

export PcfCollection, MpcfError,
       pdist, cdist, l2_kernel, l2_inner_product, lp_distance, lp_norm,
       total_breakpoints, knn, kernel_matvec, last_task_info
# GPU memory kept between computations
export gpu_cached_bytes, gpu_cache_limit, set_gpu_cache_limit, release_gpu_memory
# piecewise linear functions and objects of several functions
export plfs, function_type, landscape, silhouette
# [tda] barcodes, pointwise operations, read-out and files
export betti_curve, stable_rank, accumulated_persistence,
       pcf_sum, pcf_mean, pcf_combine, pcf_evaluate, breakpoints, to_list,
       pcf_save, pcf_load

# ===========================================================================
# The C interface. Names mirror mpcf.h; tools/check_signatures.py checks every
# ccall in this file against the header (argument count and types, return
# type, enum values, the version below and the list of unwrapped functions).
# ===========================================================================

"MPCF_VERSION of the mpcf.h this package was written for (MAJOR*10000 + MINOR*100 + PATCH)."
const MPCF_HEADER_VERSION = 100

# Opaque C handles; Julia only ever holds pointers to them.
mutable struct mpcf_pcfs end
mutable struct mpcf_options end
mutable struct mpcf_task end

# enum mpcf_status
const MPCF_OK = Cint(0)
const MPCF_ERROR_INVALID_ARGUMENT = Cint(1)
const MPCF_ERROR_INVALID_PCF = Cint(2)
const MPCF_ERROR_BUFFER_TOO_SMALL = Cint(3)
const MPCF_ERROR_DTYPE_MISMATCH = Cint(4)
const MPCF_ERROR_OUT_OF_MEMORY = Cint(5)
const MPCF_ERROR_CUDA_UNAVAILABLE = Cint(6)
const MPCF_ERROR_CUDA = Cint(7)
const MPCF_ERROR_CANCELLED = Cint(8)
const MPCF_ERROR_INTERNAL = Cint(9)
const MPCF_RUNNING = Cint(10)
# enum mpcf_dtype
const MPCF_FLOAT32 = Cint(1)
const MPCF_FLOAT64 = Cint(2)
# enum mpcf_backend
const MPCF_BACKEND_AUTO = Cint(0)
const MPCF_BACKEND_CPU = Cint(1)
const MPCF_BACKEND_CUDA = Cint(2)
# enum mpcf_layout
const MPCF_LAYOUT_DENSE = Cint(0)
const MPCF_LAYOUT_CONDENSED = Cint(1)
const MPCF_LAYOUT_PACKED_LOWER = Cint(2)
# enum mpcf_metric
const MPCF_METRIC_LP_DISTANCE = Cint(0)
const MPCF_METRIC_L2_KERNEL = Cint(1)
# enum mpcf_kernel
const MPCF_KERNEL_L2 = Cint(0)
const MPCF_KERNEL_GAUSSIAN = Cint(1)
const MPCF_KERNEL_LAPLACIAN = Cint(2)
# enum mpcf_function_type
const MPCF_PIECEWISE_CONSTANT = Cint(1)
const MPCF_PIECEWISE_LINEAR = Cint(2)
# enum mpcf_backend_reason
const MPCF_REASON_REQUESTED = Cint(0)
const MPCF_REASON_AUTO_THRESHOLD_MET = Cint(1)
const MPCF_REASON_AUTO_BELOW_THRESHOLD = Cint(2)
const MPCF_REASON_AUTO_NO_CUDA_BUILD = Cint(3)
const MPCF_REASON_AUTO_NO_DEVICE = Cint(4)
const MPCF_REASON_CPU_ONLY = Cint(5)

# struct mpcf_task_info of mpcf.h, field for field in its order and types
# (libmpcf writes into it; struct_size says how much). The enums are C ints.
const MPCF_TASK_INFO_MAX_DEVICES = 64
struct mpcf_task_info
    struct_size::UInt32
    backend::Cint           # mpcf_backend
    reason::Cint            # mpcf_backend_reason
    threads::Int32
    merge_steps::Cdouble
    seconds::Cdouble
    device_count::Int32
    devices::NTuple{MPCF_TASK_INFO_MAX_DEVICES,Int32}
end

# Every C function this file calls. They are resolved once, in __init__, so
# that a library lacking one fails at load time with a clear message.
const C_FUNCTIONS = (
    :mpcf_version, :mpcf_version_string, :mpcf_build_info, :mpcf_has_cuda,
    :mpcf_cuda_device_count, :mpcf_last_error_message, :mpcf_status_name,
    :mpcf_cuda_cached_bytes, :mpcf_cuda_cache_limit, :mpcf_cuda_set_cache_limit,
    :mpcf_cuda_release_memory,
    :mpcf_pcfs_create, :mpcf_pcfs_create_interleaved, :mpcf_pcfs_destroy,
    :mpcf_pcfs_total_breakpoints,
    :mpcf_options_create, :mpcf_options_destroy, :mpcf_options_set_backend,
    :mpcf_options_set_threads, :mpcf_options_set_window, :mpcf_options_set_block_hints,
    :mpcf_options_set_cuda_threshold, :mpcf_options_set_devices,
    :mpcf_options_set_memory_fraction,
    :mpcf_pdist_size, :mpcf_l2_kernel_size, :mpcf_cdist_size,
    :mpcf_task_progress, :mpcf_task_wait, :mpcf_task_cancel, :mpcf_task_destroy,
    :mpcf_pdist_start, :mpcf_l2_kernel_start, :mpcf_cdist_start,
    :mpcf_lp_distance, :mpcf_l2_inner_product, :mpcf_lp_norm,
    :mpcf_knn_size, :mpcf_knn_start, :mpcf_kernel_matvec_start,
    :mpcf_task_info_get, :mpcf_last_task_info,
    # [tda]
    :mpcf_pcfs_from_barcodes, :mpcf_pcfs_reduce, :mpcf_pcfs_combine, :mpcf_pcfs_evaluate,
    :mpcf_pcfs_offsets, :mpcf_pcfs_breakpoints, :mpcf_pcfs_save, :mpcf_pcfs_load,
    :mpcf_pcfs_dtype, :mpcf_pcfs_count,
    # [dask] views
    :mpcf_pcfs_slice,
    # PLFs and objects of several functions
    :mpcf_plfs_create, :mpcf_plfs_create_interleaved, :mpcf_pcfs_function_type,
    :mpcf_plfs_landscapes, :mpcf_plfs_silhouettes,
    :mpcf_pcfs_reshape, :mpcf_pcfs_set_component_axis, :mpcf_pcfs_components,
    # checks without collections
    :mpcf_knn_check,
)

"""
Public C functions this package deliberately does not call, with the reason.
The signature check fails on any public function that is neither called nor
listed here.
"""
const UNWRAPPED = (
    :mpcf_pdist => "pdist runs as a task (mpcf_pdist_start) so that an interrupt can cancel it",
    :mpcf_l2_kernel => "l2_kernel runs as a task (mpcf_l2_kernel_start), see mpcf_pdist",
    :mpcf_cdist => "cdist runs as a task (mpcf_cdist_start), see mpcf_pdist",
    :mpcf_task_status => "the wait loop polls with mpcf_task_wait and a short timeout",
    :mpcf_pcfs_ndim => "collections are vectors in Julia (reshape only shapes internal component views)",
    :mpcf_pcfs_shape => "collections are vectors in Julia (reshape only shapes internal component views)",
    :mpcf_kernel_matvec_size => "the output is length(X) x size(V, 2), allocated in Julia",
    :mpcf_knn => "knn runs as a task (mpcf_knn_start), see mpcf_pdist",
    :mpcf_knn_both => "for a knn split into tiles (mpcf.dask in Python); Julia's knn is one call",
    :mpcf_knn_both_start => "see mpcf_knn_both",
    :mpcf_knn_merge => "for a knn split into tiles (mpcf.dask in Python); Julia's knn is one call",
    :mpcf_kernel_matvec => "kernel_matvec runs as a task (mpcf_kernel_matvec_start), see mpcf_pdist",
    :mpcf_pdist_stream => "its callback runs on a libmpcf worker thread, where Julia code must not run",
    :mpcf_pdist_stream_start => "see mpcf_pdist_stream",
    :mpcf_cdist_stream => "see mpcf_pdist_stream",
    :mpcf_cdist_stream_start => "see mpcf_pdist_stream",
    :mpcf_cuda_register_host => "Julia's pdist, l2_kernel and cdist allocate each result (no out argument), so a registered buffer would never receive one",
    :mpcf_cuda_unregister_host => "see mpcf_cuda_register_host",
    # [tda]
    :mpcf_pcfs_serialized_size => "files are read and written by path (mpcf_pcfs_save / mpcf_pcfs_load)",
    :mpcf_pcfs_serialize => "files are read and written by path (mpcf_pcfs_save / mpcf_pcfs_load)",
    :mpcf_pcfs_deserialize => "files are read and written by path (mpcf_pcfs_save / mpcf_pcfs_load)",
    :mpcf_exponent_check => "p is checked by the computation it is passed to (knn by mpcf_knn_check)",
    :mpcf_last_error_detail => "MpcfError carries the library's message, which names the same indices",
)

# ===========================================================================
# Loading the library
# ===========================================================================

const _LIB_PATH = Ref{String}("")
const _FPTRS = Dict{Symbol,Ptr{Cvoid}}()  # filled by __init__, read-only afterwards

function __init__()
    _load_library!()
    return nothing
end

function _locate_library()
    path = get(ENV, "MPCF_LIBRARY", "")
    if !isempty(path)
        return path, "ENV[\"MPCF_LIBRARY\"]"
    end
    found = Libdl.find_library(["libmpcf", "mpcf"])
    if isempty(found)
        error("libmpcf was not found: ENV[\"MPCF_LIBRARY\"] is not set and no libmpcf is on ",
              "the system library search path (LD_LIBRARY_PATH, ldconfig). Set ",
              "ENV[\"MPCF_LIBRARY\"] to the full path of libmpcf.so (for a CMake build: ",
              "build/capi/libmpcf.so) before `using Mpcf`.")
    end
    return found, "the system library search path"
end

function _load_library!()
    path, source = _locate_library()
    handle = try
        Libdl.dlopen(path)
    catch err
        error("libmpcf could not be loaded from \"", path, "\" (found through ", source, "): ",
              sprint(showerror, err))
    end
    fptrs = Dict{Symbol,Ptr{Cvoid}}()
    absent = Symbol[]
    for name in C_FUNCTIONS
        fptr = try
            Libdl.dlsym(handle, name)
        catch
            C_NULL
        end
        if fptr == C_NULL
            push!(absent, name)
        else
            fptrs[name] = fptr
        end
    end
    if !isempty(absent)
        error("the libmpcf at \"", path, "\" lacks ", join(absent, ", "),
              "; it is older than the mpcf.h this package was written for (version ",
              _version_text(MPCF_HEADER_VERSION), ")")
    end
    empty!(_FPTRS)
    merge!(_FPTRS, fptrs)
    _LIB_PATH[] = path
    version = Int(ccall(_sym(:mpcf_version), Cint, ()))
    if !_compatible(version, MPCF_HEADER_VERSION)
        empty!(_FPTRS)
        error("the libmpcf at \"", path, "\" is version ", _version_text(version),
              " but this Mpcf package was written for ", _version_text(MPCF_HEADER_VERSION),
              "; install a matching libmpcf or a matching Mpcf package")
    end
    return nothing
end

_version_text(v::Integer) = string(div(v, 10000), ".", div(v % 10000, 100), ".", v % 100)

"""
    _compatible(library, header) -> Bool

Whether a library of version `library` (encoded like MPCF_VERSION) can serve
a package written for `header`: the same major version and, for 0.x
releases, the same minor version (a 0.x minor release may change the ABI);
otherwise a minor version at least the header's.
"""
function _compatible(library::Integer, header::Integer)
    lib_major, lib_minor = div(library, 10000), div(library % 10000, 100)
    hdr_major, hdr_minor = div(header, 10000), div(header % 10000, 100)
    lib_major == hdr_major || return false
    hdr_major == 0 && return lib_minor == hdr_minor
    return lib_minor >= hdr_minor
end

@inline function _sym(name::Symbol)
    fptr = get(_FPTRS, name, C_NULL)
    fptr == C_NULL && _not_loaded(name)
    return fptr
end

@noinline function _not_loaded(name::Symbol)
    error("libmpcf is not loaded (", name, " unavailable); loading Mpcf failed earlier, see ",
          "that error")
end

"Path of the libmpcf this session loaded."
library_path() = _LIB_PATH[]

"Version of the loaded libmpcf."
library_version() = VersionNumber(unsafe_string(ccall(_sym(:mpcf_version_string), Cstring, ())))

"One line describing how the loaded libmpcf was built (CUDA, compiler, threads)."
build_info() = unsafe_string(ccall(_sym(:mpcf_build_info), Cstring, ()))

"Whether the loaded libmpcf has the CUDA backend."
has_cuda() = ccall(_sym(:mpcf_has_cuda), Cint, ()) != 0

"Number of usable CUDA devices (0 without CUDA, driver or device)."
cuda_device_count() = Int(ccall(_sym(:mpcf_cuda_device_count), Cint, ()))

"""
    gpu_cached_bytes(device=0)

Bytes of GPU memory libmpcf keeps on CUDA device `device` (the CUDA id,
from 0) between computations, for the next computation on that device.
"""
function gpu_cached_bytes(device::Integer=0)
    out = Ref{UInt64}(0)
    @check ccall(_sym(:mpcf_cuda_cached_bytes), Cint, (Cint, Ref{UInt64}), Cint(device), out)
    return Int(out[])
end

"The most bytes of GPU memory libmpcf keeps per device between computations."
function gpu_cache_limit()
    out = Ref{UInt64}(0)
    @check ccall(_sym(:mpcf_cuda_cache_limit), Cint, (Ref{UInt64},), out)
    return Int(out[])
end

"Keep at most `nbytes` of GPU memory per device between computations (0: none)."
function set_gpu_cache_limit(nbytes::Integer)
    nbytes >= 0 || throw(ArgumentError("nbytes = $nbytes is negative"))
    @check ccall(_sym(:mpcf_cuda_set_cache_limit), Cint, (UInt64,), UInt64(nbytes))
    return nothing
end

"Free the GPU memory libmpcf keeps between computations, on every device, now."
function release_gpu_memory()
    @check ccall(_sym(:mpcf_cuda_release_memory), Cint, ())
    return nothing
end

# ===========================================================================
# Errors: the one checked-call path
# ===========================================================================

"""
    MpcfError <: Exception

A libmpcf call failed. `status` is the C status code (see the `MPCF_*`
constants), `name` its name (e.g. `"MPCF_ERROR_INVALID_PCF"`) and `msg` the
library's message, which names the offending argument or index. Indices in
libmpcf messages count from 0 (function 0 is `X[1]` in Julia).
"""
struct MpcfError <: Exception
    status::Cint
    name::String
    msg::String
end

function Base.showerror(io::IO, e::MpcfError)
    print(io, "MpcfError (", e.name, "): ", e.msg)
    if e.status == MPCF_ERROR_INVALID_PCF
        print(io, " (libmpcf counts functions and breakpoints from 0)")
    end
    return nothing
end

# Reads the thread-local message of the failure that produced `status`. It
# must run on the same OS thread as the failed call, with no yield in
# between, which is why every call site checks its status immediately.
function _error(status::Cint)
    name = unsafe_string(ccall(_sym(:mpcf_status_name), Cstring, (Cint,), status))
    msg = unsafe_string(ccall(_sym(:mpcf_last_error_message), Cstring, ()))
    return MpcfError(status, name, isempty(msg) ? "(no message)" : msg)
end

@inline function _check(status::Cint)
    status == MPCF_OK || throw(_error(status))
    return nothing
end

"`@check ccall(...)`: throw an [`MpcfError`](@ref) unless the call returns MPCF_OK."
macro check(call)
    return :(_check($(esc(call))))
end

# ===========================================================================
# Options
# ===========================================================================

"""
    Options(; backend=:auto, threads=0, window=nothing, devices=nothing,
            memory_fraction=nothing, cuda_threshold=nothing, block_hints=nothing)

Settings for a computation, for the cases the keywords of [`pdist`](@ref) and
friends do not cover. `backend` is `:auto`, `:cpu` or `:cuda`; `threads = 0`
uses all hardware threads; `window = (a, b)` integrates over `[a, b)` instead
of the whole line; `devices` lists CUDA device ids; `memory_fraction` in
`(0, 1]` bounds the GPU memory used; `cuda_threshold` is the number of merge
steps from which `:auto` picks CUDA; `block_hints = (split_hint=...,
min_block_side=..., max_block_elements=...)` tunes the block decomposition
(results never depend on it). `nothing` keeps the library default.
"""
mutable struct Options
    ptr::Ptr{mpcf_options}

    function Options(; backend::Symbol = :auto, threads::Integer = 0, window = nothing,
                     devices = nothing, memory_fraction = nothing, cuda_threshold = nothing,
                     block_hints = nothing)
        out = Ref{Ptr{mpcf_options}}(C_NULL)
        @check ccall(_sym(:mpcf_options_create), Cint, (Ref{Ptr{mpcf_options}},), out)
        o = finalizer(_destroy!, new(out[]))
        @check ccall(_sym(:mpcf_options_set_backend), Cint, (Ptr{mpcf_options}, Cint),
                     o, _backend_code(backend))
        @check ccall(_sym(:mpcf_options_set_threads), Cint, (Ptr{mpcf_options}, Cint),
                     o, _to_cint(threads, "threads"))
        if window !== nothing
            a, b = _window_bounds(window)
            @check ccall(_sym(:mpcf_options_set_window), Cint,
                         (Ptr{mpcf_options}, Cdouble, Cdouble), o, a, b)
        end
        if devices !== nothing
            ids = Cint[_to_cint(d, "device id") for d in devices]
            GC.@preserve ids begin
                @check ccall(_sym(:mpcf_options_set_devices), Cint,
                             (Ptr{mpcf_options}, Csize_t, Ptr{Cint}),
                             o, Csize_t(length(ids)), pointer(ids))
            end
        end
        if memory_fraction !== nothing
            @check ccall(_sym(:mpcf_options_set_memory_fraction), Cint,
                         (Ptr{mpcf_options}, Cdouble), o, Float64(memory_fraction))
        end
        if cuda_threshold !== nothing
            @check ccall(_sym(:mpcf_options_set_cuda_threshold), Cint,
                         (Ptr{mpcf_options}, Cdouble), o, Float64(cuda_threshold))
        end
        if block_hints !== nothing
            split_hint, min_side, max_elements = _block_hints(block_hints)
            @check ccall(_sym(:mpcf_options_set_block_hints), Cint,
                         (Ptr{mpcf_options}, UInt64, UInt64, UInt64),
                         o, split_hint, min_side, max_elements)
        end
        return o
    end
end

function _destroy!(o::Options)
    ptr = o.ptr
    o.ptr = C_NULL
    if ptr != C_NULL && haskey(_FPTRS, :mpcf_options_destroy)
        ccall(_sym(:mpcf_options_destroy), Cvoid, (Ptr{mpcf_options},), ptr)
    end
    return nothing
end

Base.unsafe_convert(::Type{Ptr{mpcf_options}}, o::Options) = _live(o.ptr, "Options")
# `nothing` stands for the library defaults (a NULL options pointer).
Base.unsafe_convert(::Type{Ptr{mpcf_options}}, ::Nothing) = Ptr{mpcf_options}(C_NULL)

Base.show(io::IO, o::Options) = print(io, o.ptr == C_NULL ? "Options(freed)" : "Options(...)")

function _live(ptr::Ptr, what::String)
    ptr == C_NULL && throw(ArgumentError(
        "this $what has been freed (finalize was called on it) and cannot be used any more"))
    return ptr
end

function _backend_code(backend::Symbol)
    backend === :auto && return MPCF_BACKEND_AUTO
    backend === :cpu && return MPCF_BACKEND_CPU
    backend === :cuda && return MPCF_BACKEND_CUDA
    throw(ArgumentError("backend = :$backend is not one of :auto, :cpu, :cuda"))
end

function _to_cint(x::Integer, what::String)
    typemin(Cint) <= x <= typemax(Cint) ||
        throw(ArgumentError("$what = $x does not fit a C int"))
    return Cint(x)
end
_to_cint(x, what::String) = throw(ArgumentError("$what must be an integer; got $(repr(x))"))

function _window_bounds(window)
    if !(window isa Tuple{Real,Real})
        throw(ArgumentError("window must be a tuple (a, b) of two real numbers; got $(repr(window))"))
    end
    return Float64(window[1]), Float64(window[2])
end

function _block_hints(hints)
    if !(hints isa NamedTuple)
        throw(ArgumentError("block_hints must be a named tuple such as " *
                            "(split_hint = 0, min_block_side = 0, max_block_elements = 0)"))
    end
    for key in keys(hints)
        key in (:split_hint, :min_block_side, :max_block_elements) || throw(ArgumentError(
            "block_hints has an unknown field $key; the fields are split_hint, " *
            "min_block_side and max_block_elements"))
    end
    value(key) = _to_uint64(get(hints, key, 0), "block_hints.$key")
    return value(:split_hint), value(:min_block_side), value(:max_block_elements)
end

function _to_uint64(x::Integer, what::String)
    x >= 0 || throw(ArgumentError("$what = $x is negative"))
    return UInt64(x)
end
_to_uint64(x, what::String) = throw(ArgumentError("$what must be an integer; got $(repr(x))"))

# Keywords shared by the matrix functions -> an Options, or `nothing` for the
# library defaults.
function _resolve_options(options, window, backend::Symbol, threads::Integer)
    simple = window !== nothing || backend !== :auto || threads != 0
    if options !== nothing
        options isa Options || throw(ArgumentError("options must be an Mpcf.Options"))
        simple && throw(ArgumentError(
            "pass window, backend and threads either as keywords or inside options, not both"))
        return options
    end
    simple || return nothing
    return Options(; backend = backend, threads = threads, window = window)
end

# ===========================================================================
# PCF collections
# ===========================================================================

struct _FromHandle end

"""
    PcfCollection(funcs)
    PcfCollection{T}(funcs)
    PcfCollection(offsets, times, values)
    PcfCollection(offsets, points)

An immutable, validated collection of `n` PCFs with `Float32` or `Float64`
times and values (`T`), held by libmpcf. Every constructor takes
`type = :linear` to make piecewise linear functions instead (see
[`plfs`](@ref)); [`function_type`](@ref) tells which kind a collection holds.

* `funcs`: a vector whose elements are `(times, values)` tuples of vectors,
  `times => values` pairs, or `m×2` matrices with columns `(t, v)`. `T` is
  `Float32` when every function is `Float32`, else `Float64`.
* CSR form: `offsets` has `n + 1` entries, starts at 0 and is 0-based like
  the C API: function `i` is `times[offsets[i]+1 : offsets[i+1]]`.
* `points`: a `2×N` matrix whose column `k` is `(t_k, v_k)`.

Data is copied; the arrays may be changed afterwards. Invalid functions
(no breakpoints, unsorted or repeated times, NaN or Inf) raise an
[`MpcfError`](@ref) naming the function and breakpoint. `finalize(X)` frees
the collection at once instead of at garbage collection.
"""
mutable struct PcfCollection{T<:Union{Float32,Float64}}
    ptr::Ptr{mpcf_pcfs}
    n::Int
    # Functions per object for `components = true` ([`landscape`](@ref) sets
    # it to k; 1 otherwise).
    width::Int

    function PcfCollection{T}(::_FromHandle, ptr::Ptr{mpcf_pcfs}, n::Integer,
                              width::Integer = 1) where {T<:Union{Float32,Float64}}
        return finalizer(_destroy!, new{T}(ptr, Int(n), Int(width)))
    end
end

function _destroy!(X::PcfCollection)
    ptr = X.ptr
    X.ptr = C_NULL
    if ptr != C_NULL && haskey(_FPTRS, :mpcf_pcfs_destroy)
        ccall(_sym(:mpcf_pcfs_destroy), Cvoid, (Ptr{mpcf_pcfs},), ptr)
    end
    return nothing
end

Base.unsafe_convert(::Type{Ptr{mpcf_pcfs}}, X::PcfCollection) = _live(X.ptr, "PcfCollection")

Base.length(X::PcfCollection) = X.n

function Base.show(io::IO, X::PcfCollection{T}) where {T}
    state = X.ptr == C_NULL ? ", freed" : ""
    kind = X.ptr != C_NULL && function_type(X) === :linear ? ", piecewise linear" : ""
    width = X.width > 1 ? ", $(X.width) per object" : ""
    print(io, "PcfCollection{", T, "}(", X.n, X.n == 1 ? " function" : " functions", kind, width,
          state, ")")
    return nothing
end

"""
    function_type(X::PcfCollection) -> Symbol

`:constant` when `X` holds piecewise constant functions, `:linear` when it
holds piecewise linear ones ([`plfs`](@ref), [`landscape`](@ref)).
"""
function function_type(X::PcfCollection)
    out = Ref{Cint}(0)
    @check ccall(_sym(:mpcf_pcfs_function_type), Cint, (Ptr{mpcf_pcfs}, Ref{Cint}), X, out)
    return out[] == MPCF_PIECEWISE_LINEAR ? :linear : :constant
end

# type = :constant / :linear -> whether to create PLFs.
function _is_linear(type::Symbol)
    type === :linear && return true
    type === :constant && return false
    throw(ArgumentError("type = :$type is not one of :constant, :linear"))
end

_dtype_code(::Type{Float32}) = MPCF_FLOAT32
_dtype_code(::Type{Float64}) = MPCF_FLOAT64

_dense(::Type{T}, x::Vector{T}) where {T} = x
_dense(::Type{T}, x::AbstractVector) where {T} = Vector{T}(x)

# Checks CSR offsets on the Julia side (so that C never reads past the
# arrays) and returns them as a Vector{UInt64}.
function _offsets(offsets::AbstractVector{<:Integer}, ntimes::Integer, nvalues::Integer)
    isempty(offsets) && throw(ArgumentError(
        "offsets is empty; it needs n + 1 entries (a single 0 for an empty collection)"))
    first(offsets) == 0 || throw(ArgumentError(
        "offsets[1] is $(first(offsets)); CSR offsets start at 0 (they count from 0 like the C API)"))
    previous = first(offsets)
    for (k, o) in enumerate(offsets)
        o < previous && throw(ArgumentError(
            "offsets[$k] = $o is smaller than offsets[$(k - 1)] = $previous; offsets must be non-decreasing"))
        previous = o
    end
    last(offsets) == ntimes || throw(ArgumentError(
        "offsets[end] = $(last(offsets)) but times has $ntimes elements; they must be equal"))
    last(offsets) == nvalues || throw(ArgumentError(
        "offsets[end] = $(last(offsets)) but values has $nvalues elements; they must be equal"))
    return convert(Vector{UInt64}, offsets)
end

function PcfCollection{T}(offsets::AbstractVector{<:Integer}, times::AbstractVector{<:Real},
                          values::AbstractVector{<:Real};
                          type::Symbol = :constant) where {T<:Union{Float32,Float64}}
    linear = _is_linear(type)
    off = _offsets(offsets, length(times), length(values))
    t = _dense(T, times)
    v = _dense(T, values)
    out = Ref{Ptr{mpcf_pcfs}}(C_NULL)
    GC.@preserve off t v begin
        if linear
            @check ccall(_sym(:mpcf_plfs_create), Cint,
                         (Cint, UInt64, Ptr{UInt64}, Ptr{Cvoid}, Ptr{Cvoid}, Ref{Ptr{mpcf_pcfs}}),
                         _dtype_code(T), UInt64(length(off) - 1), pointer(off), pointer(t),
                         pointer(v), out)
        else
            @check ccall(_sym(:mpcf_pcfs_create), Cint,
                         (Cint, UInt64, Ptr{UInt64}, Ptr{Cvoid}, Ptr{Cvoid}, Ref{Ptr{mpcf_pcfs}}),
                         _dtype_code(T), UInt64(length(off) - 1), pointer(off), pointer(t),
                         pointer(v), out)
        end
    end
    return PcfCollection{T}(_FromHandle(), out[], length(off) - 1)
end

function PcfCollection(offsets::AbstractVector{<:Integer}, times::AbstractVector{<:Real},
                       values::AbstractVector{<:Real}; type::Symbol = :constant)
    T = eltype(times) === Float32 && eltype(values) === Float32 ? Float32 : Float64
    return PcfCollection{T}(offsets, times, values; type = type)
end

function PcfCollection{T}(offsets::AbstractVector{<:Integer}, points::AbstractMatrix{<:Real};
                          type::Symbol = :constant) where {T<:Union{Float32,Float64}}
    linear = _is_linear(type)
    size(points, 1) == 2 || throw(ArgumentError(
        "points is $(size(points, 1))×$(size(points, 2)); interleaved points are a 2×N matrix " *
        "whose column k is (t_k, v_k)"))
    off = _offsets(offsets, size(points, 2), size(points, 2))
    pts = points isa Matrix{T} ? points : Matrix{T}(points)
    out = Ref{Ptr{mpcf_pcfs}}(C_NULL)
    GC.@preserve off pts begin
        if linear
            @check ccall(_sym(:mpcf_plfs_create_interleaved), Cint,
                         (Cint, UInt64, Ptr{UInt64}, Ptr{Cvoid}, Ref{Ptr{mpcf_pcfs}}),
                         _dtype_code(T), UInt64(length(off) - 1), pointer(off), pointer(pts),
                         out)
        else
            @check ccall(_sym(:mpcf_pcfs_create_interleaved), Cint,
                         (Cint, UInt64, Ptr{UInt64}, Ptr{Cvoid}, Ref{Ptr{mpcf_pcfs}}),
                         _dtype_code(T), UInt64(length(off) - 1), pointer(off), pointer(pts),
                         out)
        end
    end
    return PcfCollection{T}(_FromHandle(), out[], length(off) - 1)
end

function PcfCollection(offsets::AbstractVector{<:Integer}, points::AbstractMatrix{<:Real};
                       type::Symbol = :constant)
    T = eltype(points) === Float32 ? Float32 : Float64
    return PcfCollection{T}(offsets, points; type = type)
end

# One function given as (times, values), times => values or an m×2 matrix.
_breakpoints(f::Tuple{AbstractVector,AbstractVector}, k::Int) = f
_breakpoints(f::Pair{<:AbstractVector,<:AbstractVector}, k::Int) = (f.first, f.second)
function _breakpoints(f::AbstractMatrix, k::Int)
    size(f, 2) == 2 || throw(ArgumentError(
        "function $k is a $(size(f, 1))×$(size(f, 2)) matrix; a PCF matrix has two columns (t, v)"))
    return (view(f, :, 1), view(f, :, 2))
end
function _breakpoints(f, k::Int)
    throw(ArgumentError("function $k is a $(typeof(f)); give each PCF as a (times, values) " *
                        "tuple of vectors, a times => values pair or an m×2 matrix"))
end

# Whether a function given in one of the forms above holds Float32 data
# (false for anything else; the constructor then reports the bad element).
_is_float32(f::Tuple{AbstractVector,AbstractVector}) =
    eltype(f[1]) === Float32 && eltype(f[2]) === Float32
_is_float32(f::Pair{<:AbstractVector,<:AbstractVector}) =
    eltype(f.first) === Float32 && eltype(f.second) === Float32
_is_float32(f::AbstractMatrix) = eltype(f) === Float32
_is_float32(f) = false

function PcfCollection{T}(funcs::AbstractVector;
                          type::Symbol = :constant) where {T<:Union{Float32,Float64}}
    offsets = Vector{UInt64}(undef, length(funcs) + 1)
    offsets[1] = 0
    total = 0
    for (k, f) in enumerate(funcs)
        t, v = _breakpoints(f, k)
        length(t) == length(v) || throw(ArgumentError(
            "function $k has $(length(t)) times but $(length(v)) values; they must match"))
        isempty(t) && throw(ArgumentError(
            "function $k has no breakpoints; every PCF needs at least one (t, v)"))
        total += length(t)
        offsets[k + 1] = total
    end
    times = Vector{T}(undef, total)
    values = Vector{T}(undef, total)
    position = 1
    for (k, f) in enumerate(funcs)
        t, v = _breakpoints(f, k)
        m = length(t)
        copyto!(times, position, t, firstindex(t), m)
        copyto!(values, position, v, firstindex(v), m)
        position += m
    end
    return PcfCollection{T}(offsets, times, values; type = type)
end

function PcfCollection(funcs::AbstractVector; type::Symbol = :constant)
    T = !isempty(funcs) && all(_is_float32, funcs) ? Float32 : Float64
    return PcfCollection{T}(funcs; type = type)
end

"""
    plfs(funcs)
    plfs(offsets, times, values)
    plfs(offsets, points)
    plfs(T, args...)

A collection of piecewise linear functions (PLFs): `PcfCollection(args...;
type = :linear)` (or `PcfCollection{T}`), with the same inputs, checks and
messages. A PLF with breakpoints `(t_k, v_k)` is 0 before `t_1`, the linear
interpolation of `v_k` and `v_{k+1}` on `[t_k, t_{k+1}]` and `v_m` after the
last breakpoint. Every computation takes PLFs and is exact for them; a call
given a PCF and a PLF collection raises an [`MpcfError`](@ref) naming both.
"""
plfs(args...) = PcfCollection(args...; type = :linear)
plfs(::Type{T}, args...) where {T<:Union{Float32,Float64}} =
    PcfCollection{T}(args...; type = :linear)

"""
    total_breakpoints(X::PcfCollection) -> Int

Number of breakpoints over all functions of `X`.
"""
function total_breakpoints(X::PcfCollection)
    out = Ref{UInt64}(0)
    @check ccall(_sym(:mpcf_pcfs_total_breakpoints), Cint, (Ptr{mpcf_pcfs}, Ref{UInt64}),
                 X, out)
    return Int(out[])
end

"""
    view(X::PcfCollection{T}, r::AbstractUnitRange{<:Integer}) -> PcfCollection{T}

The functions `X[r]` as a collection of their own that shares `X`'s
breakpoints (nothing is copied) and keeps them alive after `X` is freed. It
computes like any collection, with the bits of the same functions within
`X`: `cdist(view(X, 1:100), view(X, 101:200))` is that block of `pdist(X)`.
A view of a view counts within that view; an empty range gives an empty
collection. Out-of-range indices throw a `BoundsError`.
"""
function Base.view(X::PcfCollection{T}, r::AbstractUnitRange{<:Integer}) where {T}
    if !isempty(r) && (first(r) < 1 || last(r) > length(X))
        throw(BoundsError(X, r))
    end
    # 0-based [begin, end) for the C API; an empty range is [first - 1, first - 1).
    lo = isempty(r) ? clamp(Int(first(r)) - 1, 0, length(X)) : Int(first(r)) - 1
    hi = isempty(r) ? lo : Int(last(r))
    out = Ref{Ptr{mpcf_pcfs}}(C_NULL)
    @check ccall(_sym(:mpcf_pcfs_slice), Cint,
                 (Ptr{mpcf_pcfs}, UInt64, UInt64, Ref{Ptr{mpcf_pcfs}}),
                 X, UInt64(lo), UInt64(hi), out)
    return PcfCollection{T}(_FromHandle(), out[], hi - lo)
end

# `components` of the matrix functions: `false` computes over the functions
# of X; `true` over objects of X.width consecutive functions each; an integer
# K over objects of K functions. For objects, a view of all of X is shaped
# (n ÷ K, K) and given the component axis, so the caller's handle is never
# changed; the returned collection's length counts objects.
function _objects(X::PcfCollection{T}, components) where {T}
    components === false && return X
    K = if components === true
        X.width
    elseif components isa Integer
        Int(components)
    else
        throw(ArgumentError("components must be true, false or a number of functions per " *
                            "object; got $(repr(components))"))
    end
    K >= 1 || throw(ArgumentError("components = $K; an object needs at least one function"))
    length(X) % K == 0 || throw(ArgumentError(
        "components = $K does not divide the $(length(X)) functions of the collection into " *
        "objects"))
    n = div(length(X), K)
    out = Ref{Ptr{mpcf_pcfs}}(C_NULL)
    @check ccall(_sym(:mpcf_pcfs_slice), Cint,
                 (Ptr{mpcf_pcfs}, UInt64, UInt64, Ref{Ptr{mpcf_pcfs}}),
                 X, UInt64(0), UInt64(length(X)), out)
    V = PcfCollection{T}(_FromHandle(), out[], n, K)
    shape = UInt64[n, K]
    GC.@preserve V shape begin
        @check ccall(_sym(:mpcf_pcfs_reshape), Cint, (Ptr{mpcf_pcfs}, Csize_t, Ptr{UInt64}),
                     V, Csize_t(2), pointer(shape))
    end
    @check ccall(_sym(:mpcf_pcfs_set_component_axis), Cint, (Ptr{mpcf_pcfs}, Cint), V, Cint(1))
    got = Ref{UInt64}(0)
    @check ccall(_sym(:mpcf_pcfs_components), Cint, (Ptr{mpcf_pcfs}, Ref{UInt64}), V, got)
    got[] == K || error("internal: the component view has $(got[]) components, not $K")
    return V
end
_objects(::Nothing, components) = nothing

# ===========================================================================
# Tasks: every matrix computation runs in the background while this thread
# waits in short slices, so that an interrupt (Ctrl-C) cancels it.
# ===========================================================================

const _WAIT_SLICE_SECONDS = 0.05

# `start(handle)` starts a task and stores it in `handle`. The caller keeps
# the output buffer alive (GC.@preserve) around the whole call: the task
# writes to it until mpcf_task_destroy has returned.
function _run_task(start, progress)
    handle = Ref{Ptr{mpcf_task}}(C_NULL)
    try
        start(handle)
        while true
            status = ccall(_sym(:mpcf_task_wait), Cint, (Ptr{mpcf_task}, Cdouble),
                           handle[], _WAIT_SLICE_SECONDS)  # unchecked: MPCF_RUNNING is not an error; _check below
            if status == MPCF_RUNNING
                progress === nothing || _report_progress(progress, handle[])
                yield()  # lets an interrupt or another task in
            else
                _check(status)
                _remember_task(handle[])
                progress === nothing || _report_progress(progress, handle[])
                return nothing
            end
        end
    catch
        if handle[] != C_NULL
            ccall(_sym(:mpcf_task_cancel), Cint, (Ptr{mpcf_task},), handle[])  # unchecked: best effort while an exception propagates
        end
        rethrow()
    finally
        if handle[] != C_NULL
            ccall(_sym(:mpcf_task_destroy), Cvoid, (Ptr{mpcf_task},), handle[])
        end
    end
end

# ===========================================================================
# libmpcf's account of the last computation (mpcf_task_info)
# ===========================================================================

const _REASONS = Dict(
    MPCF_REASON_REQUESTED => "requested",
    MPCF_REASON_AUTO_THRESHOLD_MET => "auto: at least the CUDA threshold of merge steps",
    MPCF_REASON_AUTO_BELOW_THRESHOLD => "auto: below the CUDA threshold",
    MPCF_REASON_AUTO_NO_CUDA_BUILD => "auto: libmpcf was built without CUDA",
    MPCF_REASON_AUTO_NO_DEVICE => "auto: no CUDA device",
    MPCF_REASON_CPU_ONLY => "computed on the CPU only",
)

_empty_task_info() = mpcf_task_info(UInt32(sizeof(mpcf_task_info)), Cint(0), Cint(0), Int32(0),
                                    0.0, 0.0, Int32(0),
                                    ntuple(_ -> Int32(-1), MPCF_TASK_INFO_MAX_DEVICES))

# Kept per Julia task, as Python keeps it per thread.
function _remember(info::mpcf_task_info)
    count = clamp(Int(info.device_count), 0, MPCF_TASK_INFO_MAX_DEVICES)
    task_local_storage(:mpcf_last_task_info, (
        backend = info.backend == MPCF_BACKEND_CUDA ? :cuda : :cpu,
        reason = get(_REASONS, info.reason, string(info.reason)),
        threads = Int(info.threads),
        devices = Int[info.devices[i] for i in 1:count],
        merge_steps = info.merge_steps,
        seconds = info.seconds,
    ))
    return nothing
end

function _remember_task(task::Ptr{mpcf_task})
    info = Ref(_empty_task_info())
    @check ccall(_sym(:mpcf_task_info_get), Cint, (Ptr{mpcf_task}, Ptr{mpcf_task_info}),
                 task, info)
    _remember(info[])
end

# Right after a synchronous call that succeeded, on its thread (no yield in
# between: the record is libmpcf's per OS thread).
function _remember_last_call()
    info = Ref(_empty_task_info())
    @check ccall(_sym(:mpcf_last_task_info), Cint, (Ptr{mpcf_task_info},), info)
    _remember(info[])
end

"""
    last_task_info() -> NamedTuple or nothing

What libmpcf reports about the last computation that succeeded in this Julia
task ([`pdist`](@ref), [`cdist`](@ref), [`l2_kernel`](@ref), [`knn`](@ref),
[`kernel_matvec`](@ref), [`lp_distance`](@ref), [`l2_inner_product`](@ref),
[`lp_norm`](@ref)), or `nothing` before the first: the fields of Python's
`mpcf.last_task_info()`. `backend` (`:cpu` or `:cuda`), `reason` (why that
backend, e.g. `"auto: below the CUDA threshold"`), `threads` (CPU worker
threads; 0 on CUDA), `devices` (the CUDA device ids), `merge_steps` (the
work: the sum over the pairs computed of the breakpoints of both functions,
what `backend = :auto` compares with its CUDA threshold) and `seconds`.
"""
last_task_info() = get(task_local_storage(), :mpcf_last_task_info, nothing)

function _report_progress(progress, task::Ptr{mpcf_task})
    done = Ref{UInt64}(0)
    total = Ref{UInt64}(0)
    @check ccall(_sym(:mpcf_task_progress), Cint, (Ptr{mpcf_task}, Ref{UInt64}, Ref{UInt64}),
                 task, done, total)
    progress(Int(done[]), Int(total[]))
    return nothing
end

function _layout_code(layout::Symbol, kernel::Bool)
    layout === :square && return MPCF_LAYOUT_DENSE
    layout === :packed_lower && return MPCF_LAYOUT_PACKED_LOWER
    if layout === :condensed
        kernel && throw(ArgumentError(
            "layout = :condensed has no diagonal and cannot hold a kernel matrix; use :square or :packed_lower"))
        return MPCF_LAYOUT_CONDENSED
    end
    choices = kernel ? ":square, :packed_lower" : ":square, :condensed, :packed_lower"
    throw(ArgumentError("layout = :$layout is not one of $choices"))
end

_p_value(p::Real) = Float64(p)

# ===========================================================================
# Matrix operations
# ===========================================================================

"""
    pdist(X::PcfCollection{T}; p=1, layout=:square, window=nothing, backend=:auto,
          threads=0, options=nothing, progress=nothing, components=false)

Lp distances between all pairs of functions of `X` (`p >= 1`, `p = Inf` for
the supremum distance), integrated over the whole line or over
`window = (a, b)`.

* `layout = :square`: an `n×n` `Matrix{T}`, symmetric, zero diagonal;
* `layout = :condensed`: a `Vector{T}` of the `n(n-1)/2` pairs in the order
  (1,2), (1,3), ..., (1,n), (2,3), ... (SciPy's `pdist`, R's `dist`);
* `layout = :packed_lower`: a `Vector{T}`, pair `(i, j)` with `i > j` at
  `(i-1)(i-2)/2 + j` (the engine's native layout).

`backend` is `:auto`, `:cpu` or `:cuda`; `threads = 0` uses every hardware
thread; `options` takes an [`Options`](@ref) for the rarer settings (then
leave `window`, `backend` and `threads` at their defaults). `progress`, if
given, is called as `progress(done, total)` while the computation runs and
once at the end. An interrupt while waiting cancels the computation.

`components = true` computes between objects of several functions instead of
single functions: the collection's consecutive groups of `X.width` functions
(the `k` landscapes of each barcode for [`landscape`](@ref)), or of `K`
functions for `components = K`. The distance of two objects is
`(Σ_k d_p(x_k, y_k)^p)^(1/p)` (the maximum for `p = Inf`), the kernel
`Σ_k ∫ x_k y_k`, each in one pass; results are indexed by object. The
collection itself is not changed. [`cdist`](@ref), [`l2_kernel`](@ref),
[`knn`](@ref) and [`kernel_matvec`](@ref) take the same keyword (both
collections are then grouped the same way). Objects are computed on the CPU.
"""
function pdist(X::PcfCollection{T}; p::Real = 1, layout::Symbol = :square, window = nothing,
               backend::Symbol = :auto, threads::Integer = 0, options = nothing,
               progress = nothing, components = false) where {T}
    X = _objects(X, components)
    code = _layout_code(layout, false)
    opts = _resolve_options(options, window, backend, threads)
    size_out = Ref{UInt64}(0)
    @check ccall(_sym(:mpcf_pdist_size), Cint, (Ptr{mpcf_pcfs}, Cint, Ref{UInt64}),
                 X, code, size_out)
    out = Vector{T}(undef, Int(size_out[]))
    pval = _p_value(p)
    GC.@preserve X opts out begin
        _run_task(progress) do handle
            @check ccall(_sym(:mpcf_pdist_start), Cint,
                         (Ptr{mpcf_pcfs}, Cdouble, Cint, Ptr{Cvoid}, UInt64, Ptr{mpcf_options},
                          Ref{Ptr{mpcf_task}}),
                         X, pval, code, pointer(out), UInt64(length(out)), opts, handle)
        end
    end
    return layout === :square ? reshape(out, length(X), length(X)) : out
end

"""
    l2_kernel(X::PcfCollection{T}; layout=:square, window=nothing, backend=:auto,
              threads=0, options=nothing, progress=nothing)
    l2_kernel(X, Y; window=nothing, backend=:auto, threads=0, options=nothing, progress=nothing)

L2 inner products `∫ f g` of all pairs of `X` (diagonal included): an `n×n`
symmetric `Matrix{T}` (`layout = :square`) or a `Vector{T}` with pair
`(i, j)`, `i >= j`, at `i(i-1)/2 + j` (`layout = :packed_lower`). With two
collections, the `length(X)×length(Y)` matrix of `∫ X[i] Y[j]`. Keywords as
in [`pdist`](@ref) (`components = true`: the kernel `Σ_k ∫ x_k y_k` of objects).
"""
function l2_kernel(X::PcfCollection{T}; layout::Symbol = :square, window = nothing,
                   backend::Symbol = :auto, threads::Integer = 0, options = nothing,
                   progress = nothing, components = false) where {T}
    X = _objects(X, components)
    code = _layout_code(layout, true)
    opts = _resolve_options(options, window, backend, threads)
    size_out = Ref{UInt64}(0)
    @check ccall(_sym(:mpcf_l2_kernel_size), Cint, (Ptr{mpcf_pcfs}, Cint, Ref{UInt64}),
                 X, code, size_out)
    out = Vector{T}(undef, Int(size_out[]))
    GC.@preserve X opts out begin
        _run_task(progress) do handle
            @check ccall(_sym(:mpcf_l2_kernel_start), Cint,
                         (Ptr{mpcf_pcfs}, Cint, Ptr{Cvoid}, UInt64, Ptr{mpcf_options},
                          Ref{Ptr{mpcf_task}}),
                         X, code, pointer(out), UInt64(length(out)), opts, handle)
        end
    end
    return layout === :square ? reshape(out, length(X), length(X)) : out
end

function l2_kernel(X::PcfCollection, Y::PcfCollection; window = nothing,
                   backend::Symbol = :auto, threads::Integer = 0, options = nothing,
                   progress = nothing, components = false)
    opts = _resolve_options(options, window, backend, threads)
    return _cross(_objects(X, components), _objects(Y, components), MPCF_METRIC_L2_KERNEL, 2.0,
                  opts, progress)
end

"""
    cdist(X::PcfCollection{T}, Y::PcfCollection{T}; p=1, window=nothing, backend=:auto,
          threads=0, options=nothing, progress=nothing)

Lp distances between every function of `X` and every function of `Y`: a
`length(X)×length(Y)` `Matrix{T}` with entry `(i, j)` = `d(X[i], Y[j])`.
`X` and `Y` must share their element type and function type. Keywords as in
[`pdist`](@ref) (`components = true`: objects of `X` against objects of `Y`).
"""
function cdist(X::PcfCollection, Y::PcfCollection; p::Real = 1, window = nothing,
               backend::Symbol = :auto, threads::Integer = 0, options = nothing,
               progress = nothing, components = false)
    opts = _resolve_options(options, window, backend, threads)
    return _cross(_objects(X, components), _objects(Y, components), MPCF_METRIC_LP_DISTANCE,
                  _p_value(p), opts, progress)
end

function _cross(X::PcfCollection{T}, Y::PcfCollection, metric::Cint, pval::Float64, opts,
                progress) where {T}
    size_out = Ref{UInt64}(0)
    @check ccall(_sym(:mpcf_cdist_size), Cint, (Ptr{mpcf_pcfs}, Ptr{mpcf_pcfs}, Ref{UInt64}),
                 X, Y, size_out)
    # libmpcf writes row-major (entry i*|Y| + j); a column-major |Y|×|X|
    # matrix receives exactly that, and its transpose is the result.
    buffer = Matrix{T}(undef, length(Y), length(X))
    length(buffer) == size_out[] || error("internal: cdist size mismatch")
    GC.@preserve X Y opts buffer begin
        _run_task(progress) do handle
            @check ccall(_sym(:mpcf_cdist_start), Cint,
                         (Ptr{mpcf_pcfs}, Ptr{mpcf_pcfs}, Cint, Cdouble, Ptr{Cvoid}, UInt64,
                          Ptr{mpcf_options}, Ref{Ptr{mpcf_task}}),
                         X, Y, metric, pval, pointer(buffer), UInt64(length(buffer)), opts,
                         handle)
        end
    end
    return permutedims(buffer)
end

# ===========================================================================
# Reductions without the n×n matrix
# ===========================================================================

_handle_or_null(Y::PcfCollection) = Base.unsafe_convert(Ptr{mpcf_pcfs}, Y)
_handle_or_null(::Nothing) = Ptr{mpcf_pcfs}(C_NULL)

"""
    knn(X::PcfCollection{T}, k; Y=nothing, p=1, window=nothing, backend=:auto, threads=0,
        options=nothing, progress=nothing) -> (distances::Matrix{T}, indices::Matrix{Int})

The `k` nearest neighbours in Lp distance of every function of `X`: among the
other functions of `X` (a function is never its own neighbour), or among the
functions of `Y`. Row `i` of the two `length(X)×k` matrices holds the
neighbours of `X[i]` in ascending order of distance, ties to the smaller
index, with 1-based indices. The distance matrix is never formed. Keywords as
in [`pdist`](@ref) (`components = true`: neighbours among objects, indices
count objects).
"""
function knn(X::PcfCollection{T}, k::Integer; Y::Union{Nothing,PcfCollection} = nothing,
             p::Real = 1, window = nothing, backend::Symbol = :auto, threads::Integer = 0,
             options = nothing, progress = nothing, components = false) where {T}
    kk = _to_uint64(k, "k")
    X = _objects(X, components)
    Y = _objects(Y, components)
    pval = _p_value(p)
    # libmpcf's checks of p and 1 <= k <= the candidates, before the outputs
    # are allocated.
    @check ccall(_sym(:mpcf_knn_check), Cint, (UInt64, Int64, Cint, Cdouble, UInt64),
                 UInt64(length(X)), Y === nothing ? Int64(-1) : Int64(length(Y)),
                 Cint(components === false ? 0 : 1), pval, kk)
    opts = _resolve_options(options, window, backend, threads)
    size_out = Ref{UInt64}(0)
    @check ccall(_sym(:mpcf_knn_size), Cint, (Ptr{mpcf_pcfs}, UInt64, Ref{UInt64}),
                 X, UInt64(k), size_out)
    # libmpcf writes (length(X), k) row-major: a column-major k×length(X)
    # matrix receives exactly that, and its transpose is the result.
    dist = Matrix{T}(undef, Int(k), length(X))
    idx = Matrix{Int64}(undef, Int(k), length(X))
    length(dist) == size_out[] || error("internal: knn size mismatch")
    GC.@preserve X Y opts dist idx begin
        yptr = _handle_or_null(Y)
        _run_task(progress) do handle
            @check ccall(_sym(:mpcf_knn_start), Cint,
                         (Ptr{mpcf_pcfs}, Ptr{mpcf_pcfs}, Cdouble, UInt64, Ptr{Cvoid}, Ptr{Int64},
                          UInt64, Ptr{mpcf_options}, Ref{Ptr{mpcf_task}}),
                         X, yptr, pval, UInt64(k), pointer(dist), pointer(idx),
                         UInt64(length(dist)), opts, handle)
        end
    end
    return permutedims(dist), permutedims(idx) .+ 1
end

const _KERNELS = Dict(:l2 => MPCF_KERNEL_L2, :gaussian => MPCF_KERNEL_GAUSSIAN,
                      :laplacian => MPCF_KERNEL_LAPLACIAN)

"""
    kernel_matvec(X::PcfCollection{T}, V; Y=nothing, kernel=:l2, p=nothing, sigma=1.0,
                  window=nothing, backend=:auto, threads=0, options=nothing, progress=nothing)

`K * V` without forming the kernel matrix `K[i, j] = k(X[i], Y[j])` (`Y`
defaults to `X`): `kernel = :l2` the inner product `∫ f g`, `:gaussian`
`exp(-d_p^2 / (2 sigma^2))` (`p = 2` by default), `:laplacian`
`exp(-d_p / sigma)` (`p = 1` by default). `V` is a vector of length
`length(Y)` or a matrix with that many rows; the result is a `Vector{T}` or a
`length(X)×size(V, 2)` `Matrix{T}`. Each entry is summed exactly after
rounding every term to a fixed grid: the same bits for any thread or GPU
count. `components = true` groups functions into objects as in
[`pdist`](@ref) (`V` then has a row per object).
"""
function kernel_matvec(X::PcfCollection{T}, V::AbstractVecOrMat;
                       Y::Union{Nothing,PcfCollection} = nothing, kernel::Symbol = :l2,
                       p = nothing, sigma::Real = 1.0, window = nothing,
                       backend::Symbol = :auto, threads::Integer = 0, options = nothing,
                       progress = nothing, components = false) where {T}
    X = _objects(X, components)
    Y = _objects(Y, components)
    haskey(_KERNELS, kernel) ||
        throw(ArgumentError("kernel must be :l2, :gaussian or :laplacian, not :$kernel"))
    pval = _p_value(p === nothing ? (kernel === :laplacian ? 1 : 2) : p)
    rows = Y === nothing ? length(X) : length(Y)
    size(V, 1) == rows ||
        throw(DimensionMismatch("V has $(size(V, 1)) rows but the kernel has $rows columns"))
    r = size(V, 2)
    # Row-major (rows, r) for libmpcf: a column-major r×rows matrix.
    vt = Matrix{T}(permutedims(reshape(V, rows, r)))
    out = Matrix{T}(undef, r, length(X))
    opts = _resolve_options(options, window, backend, threads)
    GC.@preserve X Y opts vt out begin
        yptr = _handle_or_null(Y)
        _run_task(progress) do handle
            @check ccall(_sym(:mpcf_kernel_matvec_start), Cint,
                         (Ptr{mpcf_pcfs}, Ptr{mpcf_pcfs}, Cint, Cdouble, Cdouble, Ptr{Cvoid},
                          UInt64, UInt64, Ptr{Cvoid}, UInt64, Ptr{mpcf_options},
                          Ref{Ptr{mpcf_task}}),
                         X, yptr, _KERNELS[kernel], pval, Float64(sigma), pointer(vt),
                         UInt64(length(vt)), UInt64(r), pointer(out), UInt64(length(out)),
                         opts, handle)
        end
    end
    result = permutedims(out)
    return V isa AbstractVector ? vec(result) : result
end

# ===========================================================================
# Single functions and pairs
# ===========================================================================

function _index(X::PcfCollection, i::Integer)
    1 <= i <= length(X) || throw(BoundsError(X, i))
    return UInt64(i - 1)
end

# A single PCF given as (times, values), times => values or an m×2 matrix.
function _pair_collections(f, g, type::Symbol = :constant)
    T = _is_float32(f) && _is_float32(g) ? Float32 : Float64
    return PcfCollection{T}([f]; type = type), PcfCollection{T}([g]; type = type)
end

"""
    lp_distance(f, g; p=1, window=nothing) -> Float64
    lp_distance(X::PcfCollection, i, Y::PcfCollection, j; p=1, window=nothing) -> Float64

Lp distance between two functions, each given as `(times, values)`,
`times => values` or an `m×2` matrix, or between `X[i]` and `Y[j]`. It is
computed in the collections' element type and returned as `Float64`. Single
functions are PCFs unless `type = :linear` (PLFs).
"""
function lp_distance(X::PcfCollection, i::Integer, Y::PcfCollection, j::Integer;
                     p::Real = 1, window = nothing)
    ii = _index(X, i)
    jj = _index(Y, j)
    opts = window === nothing ? nothing : Options(; window = window)
    out = Ref{Cdouble}(0.0)
    @check ccall(_sym(:mpcf_lp_distance), Cint,
                 (Ptr{mpcf_pcfs}, UInt64, Ptr{mpcf_pcfs}, UInt64, Cdouble, Ptr{mpcf_options},
                  Ref{Cdouble}),
                 X, ii, Y, jj, _p_value(p), opts, out)
    _remember_last_call()
    return out[]
end

function lp_distance(f, g; p::Real = 1, window = nothing, type::Symbol = :constant)
    F, G = _pair_collections(f, g, type)
    return lp_distance(F, 1, G, 1; p = p, window = window)
end

"""
    l2_inner_product(f, g; window=nothing) -> Float64
    l2_inner_product(X::PcfCollection, i, Y::PcfCollection, j; window=nothing) -> Float64

The L2 inner product `∫ f g`, for functions given as in [`lp_distance`](@ref).
"""
function l2_inner_product(X::PcfCollection, i::Integer, Y::PcfCollection, j::Integer;
                          window = nothing)
    ii = _index(X, i)
    jj = _index(Y, j)
    opts = window === nothing ? nothing : Options(; window = window)
    out = Ref{Cdouble}(0.0)
    @check ccall(_sym(:mpcf_l2_inner_product), Cint,
                 (Ptr{mpcf_pcfs}, UInt64, Ptr{mpcf_pcfs}, UInt64, Ptr{mpcf_options},
                  Ref{Cdouble}),
                 X, ii, Y, jj, opts, out)
    _remember_last_call()
    return out[]
end

function l2_inner_product(f, g; window = nothing, type::Symbol = :constant)
    F, G = _pair_collections(f, g, type)
    return l2_inner_product(F, 1, G, 1; window = window)
end

"""
    lp_norm(X::PcfCollection{T}; p=1, window=nothing) -> Vector{T}

The Lp norm of every function of `X` (its distance to the zero function).
"""
function lp_norm(X::PcfCollection{T}; p::Real = 1, window = nothing) where {T}
    opts = window === nothing ? nothing : Options(; window = window)
    out = Vector{T}(undef, length(X))
    GC.@preserve X opts out begin
        @check ccall(_sym(:mpcf_lp_norm), Cint,
                     (Ptr{mpcf_pcfs}, Cdouble, Ptr{Cvoid}, UInt64, Ptr{mpcf_options}),
                     X, _p_value(p), pointer(out), UInt64(length(out)), opts)
        _remember_last_call()
    end
    return out
end

# ===========================================================================
# [tda] Persistence barcodes, pointwise operations, read-out and files
# ===========================================================================

# enum mpcf_barcode_summary
const MPCF_BETTI_CURVE = Cint(0)
const MPCF_STABLE_RANK = Cint(1)
const MPCF_ACCUMULATED_PERSISTENCE = Cint(2)
# enum mpcf_reduction
const MPCF_REDUCE_SUM = Cint(0)
const MPCF_REDUCE_MEAN = Cint(1)
# MPCF_ALL_AXES of mpcf.h, ((size_t)-1): reduce over the whole collection.
const MPCF_ALL_AXES = typemax(Csize_t)

# A (birth, death) pair given as a tuple or a pair of real numbers.
_is_bar(x) = (x isa Tuple || x isa Pair) && length(x) == 2 && all(y -> y isa Real, x)

# One barcode as a k×2 Float64 matrix of (birth, death) rows.
function _barcode(b::AbstractMatrix, k::Int)
    (size(b, 2) == 2 || isempty(b)) || throw(ArgumentError(
        "barcode $k is a $(size(b, 1))×$(size(b, 2)) matrix; a barcode is a k×2 matrix of " *
        "(birth, death) rows"))
    return isempty(b) ? zeros(Float64, 0, 2) : Matrix{Float64}(b)
end
function _barcode(b::AbstractVector, k::Int)
    bars = Matrix{Float64}(undef, length(b), 2)
    for (j, bar) in enumerate(b)
        _is_bar(bar) || throw(ArgumentError(
            "bar $j of barcode $k is $(repr(bar)); a bar is a (birth, death) tuple of numbers"))
        bars[j, 1] = Float64(first(bar))
        bars[j, 2] = Float64(last(bar))
    end
    return bars
end
function _barcode(b, k::Int)
    throw(ArgumentError("barcode $k is a $(typeof(b)); give a k×2 matrix of (birth, death) " *
                        "rows or a vector of (birth, death) tuples"))
end

# One barcode (a matrix, or a vector of bars) or a vector of barcodes.
function _barcodes(barcodes)
    barcodes isa AbstractMatrix && return [_barcode(barcodes, 1)]
    barcodes isa AbstractVector || throw(ArgumentError(
        "barcodes must be a k×2 matrix, a vector of (birth, death) tuples or a vector of " *
        "such barcodes; got a $(typeof(barcodes))"))
    if !isempty(barcodes) && _is_bar(first(barcodes))
        return [_barcode(barcodes, 1)]
    end
    return [_barcode(b, k) for (k, b) in enumerate(barcodes)]
end

# Barcodes in the C API's CSR form: (offsets, interleaved (birth, death) bars, n).
function _barcode_csr(barcodes)
    bcs = _barcodes(barcodes)
    offsets = Vector{UInt64}(undef, length(bcs) + 1)
    offsets[1] = 0
    for (k, b) in enumerate(bcs)
        offsets[k + 1] = offsets[k] + UInt64(size(b, 1))
    end
    # Interleaved (birth, death) pairs, barcode after barcode.
    bars = Vector{Float64}(undef, 2 * Int(offsets[end]))
    position = 1
    for b in bcs
        for j in 1:size(b, 1)
            bars[position] = b[j, 1]
            bars[position + 1] = b[j, 2]
            position += 2
        end
    end
    return offsets, bars, length(bcs)
end

# Runs `create()`, adding to a libmpcf message that names a barcode and a bar
# that it counts them from 0.
function _naming_bars(create)
    try
        create()
    catch err
        # libmpcf names bars from 0 ("barcode 0, bar 1"); say so.
        if err isa MpcfError && occursin("barcode ", err.msg)
            throw(MpcfError(err.status, err.name, err.msg *
                            " (libmpcf counts barcodes and bars from 0: barcode 0, bar 0 is " *
                            "the first bar of the first barcode)"))
        end
        rethrow()
    end
    return nothing
end

function _from_barcodes(kind::Cint, barcodes, ::Type{T}) where {T<:Union{Float32,Float64}}
    offsets, bars, n = _barcode_csr(barcodes)
    out = Ref{Ptr{mpcf_pcfs}}(C_NULL)
    _naming_bars() do
        GC.@preserve offsets bars begin
            @check ccall(_sym(:mpcf_pcfs_from_barcodes), Cint,
                         (Cint, Cint, UInt64, Ptr{UInt64}, Ptr{Cdouble}, Ref{Ptr{mpcf_pcfs}}),
                         kind, _dtype_code(T), UInt64(n), pointer(offsets), pointer(bars), out)
        end
    end
    return PcfCollection{T}(_FromHandle(), out[], n)
end

_clip_value(clip::Real) = Float64(clip)
_clip_value(::Nothing) = Inf

"""
    landscape(barcodes, k; clip=Inf, T=Float64) -> PcfCollection{T}

Persistence landscapes `λ_1 .. λ_k` of each barcode (barcodes as for
[`betti_curve`](@ref)): a collection of `n * k` piecewise linear functions,
`λ_j` of barcode `i` at index `(i - 1) * k + j`, where `λ_j(t)` is the `j`-th
largest of the tents `max(0, min(t - birth, death - t))`. Breakpoints are
exact (births, deaths, peaks and crossings, rounded once to `T`); a `λ_j`
that is zero everywhere is the zero function `([0.0], [0.0])`. An infinite
death is an error naming the barcode and the bar unless `clip` is finite:
such a death is then `clip` (and a bar born at or after `clip` contributes
nothing).

The collection remembers `k`: `pdist(L; components = true)` is the matrix
of landscape distances `(Σ_j ‖λ_j(x) - λ_j(y)‖_p^p)^(1/p)` between the
barcodes, and likewise `cdist`, `l2_kernel`, `knn` and `kernel_matvec`.
"""
function landscape(barcodes, k::Integer; clip = Inf, T::Type = Float64)
    offsets, bars, n = _barcode_csr(barcodes)
    kk = _to_uint64(k, "k")
    out = Ref{Ptr{mpcf_pcfs}}(C_NULL)
    _naming_bars() do
        GC.@preserve offsets bars begin
            @check ccall(_sym(:mpcf_plfs_landscapes), Cint,
                         (Cint, UInt64, Ptr{UInt64}, Ptr{Cdouble}, UInt64, Cdouble,
                          Ref{Ptr{mpcf_pcfs}}),
                         _dtype_code(T), UInt64(n), pointer(offsets), pointer(bars), kk,
                         _clip_value(clip), out)
        end
    end
    return PcfCollection{T}(_FromHandle(), out[], n * Int(kk), Int(kk))
end

"""
    silhouette(barcodes; q=1, clip=Inf, T=Float64) -> PcfCollection{T}

Power-weighted silhouettes, one piecewise linear function per barcode: the
sum over bars of `w_j * tent_j(t)` divided by the sum of the `w_j`,
`w_j = (death - birth)^q` (`q >= 0`). Breakpoints at the births, peaks and
deaths; a barcode without a bar of positive length gives the zero function.
Infinite bars and `clip` as for [`landscape`](@ref).
"""
function silhouette(barcodes; q::Real = 1, clip = Inf, T::Type = Float64)
    offsets, bars, n = _barcode_csr(barcodes)
    out = Ref{Ptr{mpcf_pcfs}}(C_NULL)
    _naming_bars() do
        GC.@preserve offsets bars begin
            @check ccall(_sym(:mpcf_plfs_silhouettes), Cint,
                         (Cint, UInt64, Ptr{UInt64}, Ptr{Cdouble}, Cdouble, Cdouble,
                          Ref{Ptr{mpcf_pcfs}}),
                         _dtype_code(T), UInt64(n), pointer(offsets), pointer(bars), Float64(q),
                         _clip_value(clip), out)
        end
    end
    return PcfCollection{T}(_FromHandle(), out[], n)
end

"""
    betti_curve(barcodes; T=Float64) -> PcfCollection{T}
    stable_rank(barcodes; T=Float64) -> PcfCollection{T}
    accumulated_persistence(barcodes; T=Float64) -> PcfCollection{T}

PCFs summarising persistence barcodes, one per barcode. `barcodes` is one
barcode (a `k×2` matrix of `(birth, death)` rows, or a vector of
`(birth, death)` tuples) or a vector of barcodes. Deaths may be `Inf`;
births must be finite and `birth <= death`.

* Betti curve: `β(t) = #{bars: birth <= t < death}`;
* stable rank (standard contour): `#{bars: death - birth > t}` for `t >= 0`;
* accumulated persistence (Biscio & Møller 2019, arXiv:1611.00630): the sum
  of `death - birth` over the bars with `(birth + death) / 2 <= t`; an
  infinite bar never counts.

Breakpoints are exact; infinite bars give constant tails; bars of length 0
contribute nothing; a barcode without a bar of positive length gives the
zero function `([0.0], [0.0])`. A bad bar raises an [`MpcfError`](@ref)
naming the barcode and the bar (counted from 0).
"""
betti_curve(barcodes; T::Type = Float64) = _from_barcodes(MPCF_BETTI_CURVE, barcodes, T)

"""
    stable_rank(barcodes; T=Float64) -> PcfCollection{T}

Stable ranks for the standard contour, `#{bars: death - birth > t}` for
`t >= 0`; see [`betti_curve`](@ref) for the input and the edge cases.
"""
stable_rank(barcodes; T::Type = Float64) = _from_barcodes(MPCF_STABLE_RANK, barcodes, T)

"""
    accumulated_persistence(barcodes; T=Float64) -> PcfCollection{T}

Accumulated persistence functions (Biscio & Møller 2019): the sum of the
lengths of the bars whose meanage `(birth + death) / 2` is `<= t`; see
[`betti_curve`](@ref) for the input and the edge cases.
"""
accumulated_persistence(barcodes; T::Type = Float64) =
    _from_barcodes(MPCF_ACCUMULATED_PERSISTENCE, barcodes, T)

function _reduce(X::PcfCollection{T}, op::Cint) where {T}
    out = Ref{Ptr{mpcf_pcfs}}(C_NULL)
    @check ccall(_sym(:mpcf_pcfs_reduce), Cint,
                 (Ptr{mpcf_pcfs}, Cint, Csize_t, Ref{Ptr{mpcf_pcfs}}),
                 X, op, MPCF_ALL_AXES, out)
    return PcfCollection{T}(_FromHandle(), out[], 1)
end

"""
    pcf_sum(X) -> PcfCollection{T}
    pcf_mean(X) -> PcfCollection{T}

The pointwise sum or mean of the functions of `X` (a `PcfCollection` or
anything its constructor takes), as a collection of one function. Its
breakpoints are the union of the inputs'; its value at each `t` is computed
from the inputs' values at `t` in double precision (a balanced pairwise sum
in index order) and rounded once. The mean of no function is an error.
"""
pcf_sum(X::PcfCollection) = _reduce(X, MPCF_REDUCE_SUM)
pcf_sum(funcs::AbstractVector) = pcf_sum(PcfCollection(funcs))

"""
    pcf_mean(X) -> PcfCollection{T}

The pointwise mean of the functions of `X`; see [`pcf_sum`](@ref).
"""
pcf_mean(X::PcfCollection) = _reduce(X, MPCF_REDUCE_MEAN)
pcf_mean(funcs::AbstractVector) = pcf_mean(PcfCollection(funcs))

"""
    pcf_combine(X, Y; a=1, b=1) -> PcfCollection{T}

The pointwise linear combination `a * X[i] + b * Y[i]` of each pair of
functions. `X` and `Y` have the same length, or one of them has exactly one
function, which is then combined with every function of the other (so
`pcf_combine(X, pcf_mean(X); b = -1)` centres `X`). Both must have the same
element type.
"""
function pcf_combine(X::PcfCollection{T}, Y::PcfCollection; a::Real = 1, b::Real = 1) where {T}
    out = Ref{Ptr{mpcf_pcfs}}(C_NULL)
    @check ccall(_sym(:mpcf_pcfs_combine), Cint,
                 (Cdouble, Ptr{mpcf_pcfs}, Cdouble, Ptr{mpcf_pcfs}, Ref{Ptr{mpcf_pcfs}}),
                 Float64(a), X, Float64(b), Y, out)
    return PcfCollection{T}(_FromHandle(), out[], max(length(X), length(Y)))
end

"""
    pcf_evaluate(X::PcfCollection{T}, t::AbstractVector) -> Matrix{T}
    pcf_evaluate(X::PcfCollection{T}, t::Real) -> Vector{T}

Every function of `X` at the times `t`: entry `(i, j)` is `X[i](t[j])` (0
before the first breakpoint, the last value after the last one). `t` needs
no order and may hold `±Inf`, not `NaN`.
"""
function pcf_evaluate(X::PcfCollection{T}, t::AbstractVector{<:Real}) where {T}
    times = Vector{Float64}(t)
    # libmpcf writes row-major (i * nt + j): a column-major nt×n matrix
    # receives exactly that, and its transpose is the result.
    buffer = Matrix{T}(undef, length(times), length(X))
    GC.@preserve X times buffer begin
        @check ccall(_sym(:mpcf_pcfs_evaluate), Cint,
                     (Ptr{mpcf_pcfs}, Ptr{Cdouble}, UInt64, Ptr{Cvoid}, UInt64),
                     X, pointer(times), UInt64(length(times)), pointer(buffer),
                     UInt64(length(buffer)))
    end
    return permutedims(buffer)
end

pcf_evaluate(X::PcfCollection, t::Real) = vec(pcf_evaluate(X, [t]))

"""
    breakpoints(X::PcfCollection{T}) -> (offsets::Vector{UInt64}, times::Vector{T}, values::Vector{T})

The breakpoints of all functions in CSR form, 0-based like the C API:
function `i` has `times[offsets[i]+1 : offsets[i+1]]` and the same range of
`values`. `PcfCollection(offsets, times, values)` rebuilds the collection.
"""
function breakpoints(X::PcfCollection{T}) where {T}
    total = total_breakpoints(X)
    offsets = Vector{UInt64}(undef, length(X) + 1)
    times = Vector{T}(undef, total)
    values = Vector{T}(undef, total)
    GC.@preserve X offsets times values begin
        @check ccall(_sym(:mpcf_pcfs_offsets), Cint, (Ptr{mpcf_pcfs}, Ptr{UInt64}, UInt64),
                     X, pointer(offsets), UInt64(length(offsets)))
        @check ccall(_sym(:mpcf_pcfs_breakpoints), Cint,
                     (Ptr{mpcf_pcfs}, Ptr{Cvoid}, Ptr{Cvoid}, UInt64),
                     X, pointer(times), pointer(values), UInt64(total))
    end
    return offsets, times, values
end

"""
    to_list(X::PcfCollection{T}) -> Vector{Tuple{Vector{T},Vector{T}}}

The functions of `X` as `(times, values)` tuples (which `PcfCollection`
accepts back).
"""
function to_list(X::PcfCollection{T}) where {T}
    offsets, times, values = breakpoints(X)
    return [(times[Int(offsets[i]) + 1:Int(offsets[i + 1])],
             values[Int(offsets[i]) + 1:Int(offsets[i + 1])]) for i in 1:length(X)]
end

"""
    pcf_save(path, X::PcfCollection)
    pcf_load(path) -> PcfCollection{T}

Save a collection to, or load one from, a file in the mpcf PCF file format
(the format of the C API's `mpcf_pcfs_save`, Python's `mpcf.save`, R's
`pcf_save` and the `mpcf` CLI). Saving writes a temporary file and renames
it into place. Loading checks the file (magic, version, length, checksum)
and validates its functions; the element type `T` is the file's. A tensor
shape stored in the file is flattened (row-major): Julia collections are
vectors.
"""
function pcf_save(path::AbstractString, X::PcfCollection)
    @check ccall(_sym(:mpcf_pcfs_save), Cint, (Ptr{mpcf_pcfs}, Cstring), X, String(path))
    return nothing
end

"""
    pcf_load(path) -> PcfCollection{T}

Load a collection saved in the mpcf PCF file format; see [`pcf_save`](@ref).
"""
function pcf_load(path::AbstractString)
    out = Ref{Ptr{mpcf_pcfs}}(C_NULL)
    @check ccall(_sym(:mpcf_pcfs_load), Cint, (Cstring, Ref{Ptr{mpcf_pcfs}}), String(path), out)
    ptr = out[]
    dtype = Ref{Cint}(0)
    count = Ref{UInt64}(0)
    try
        @check ccall(_sym(:mpcf_pcfs_dtype), Cint, (Ptr{mpcf_pcfs}, Ref{Cint}), ptr, dtype)
        @check ccall(_sym(:mpcf_pcfs_count), Cint, (Ptr{mpcf_pcfs}, Ref{UInt64}), ptr, count)
    catch
        ccall(_sym(:mpcf_pcfs_destroy), Cvoid, (Ptr{mpcf_pcfs},), ptr)
        rethrow()
    end
    T = dtype[] == MPCF_FLOAT32 ? Float32 : Float64
    return PcfCollection{T}(_FromHandle(), ptr, count[])
end

end # module Mpcf
