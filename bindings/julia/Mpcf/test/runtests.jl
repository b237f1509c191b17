# Tests of the Mpcf package against hand-computed values and a small
# pure-Julia reference written here (independent of libmpcf).
# Run: MPCF_LIBRARY=/path/to/libmpcf.so julia --project=bindings/julia/Mpcf test/runtests.jl
using Test
using Mpcf

# ---------------------------------------------------------------------------
# Reference implementation: a PCF is (times, values); f = 0 before times[1],
# values[k] on [times[k], times[k+1]), values[end] after the last breakpoint.
# ---------------------------------------------------------------------------

function ref_value(f, x)
    t, v = f
    k = searchsortedlast(t, x)
    return k == 0 ? 0.0 : Float64(v[k])
end

# The pieces of [a, b) on which both f and g are constant: (left, right, f, g).
function ref_pieces(f, g, a, b)
    cuts = sort(unique(vcat(Float64.(f[1]), Float64.(g[1]))))
    edges = vcat(a, filter(x -> a < x < b, cuts), b)
    pieces = Tuple{Float64,Float64,Float64,Float64}[]
    for k in 1:length(edges)-1
        lo, hi = edges[k], edges[k+1]
        x = isfinite(lo) ? lo : hi - 1.0  # any point of the piece
        push!(pieces, (lo, hi, ref_value(f, x), ref_value(g, x)))
    end
    return pieces
end

# Integral of h(f, g) over [a, b); a zero integrand contributes exactly 0.
function ref_integral(h, f, g, a, b)
    total = 0.0
    for (lo, hi, fv, gv) in ref_pieces(f, g, a, b)
        y = h(fv, gv)
        y == 0 && continue
        total += y * (hi - lo)
    end
    return total
end

function ref_lp(f, g, p; window = (-Inf, Inf))
    a, b = window
    if p == Inf
        return maximum(abs(fv - gv) for (_, _, fv, gv) in ref_pieces(f, g, a, b))
    end
    s = ref_integral((x, y) -> abs(x - y)^p, f, g, a, b)
    return p == 1 ? s : s^(1 / p)
end

ref_kernel(f, g; window = (-Inf, Inf)) = ref_integral(*, f, g, window[1], window[2])

const ZERO = ([0.0], [0.0])

# A small deterministic generator (64-bit LCG), so that the tests need no
# package beyond Test and their data never changes.
mutable struct Lcg
    state::UInt64
end
function next_unit!(g::Lcg)  # uniform in [0, 1)
    g.state = g.state * 0x5851f42d4c957f2d + 0x14057b7ef767814f
    return Float64(g.state >> 11) / 2.0^53
end
next_int!(g::Lcg, k::Int) = 1 + min(k - 1, floor(Int, k * next_unit!(g)))  # in 1:k

# Random PCFs of the usual shape: t_1 = 0, gaps in [0.05, 1.05), last value 0.
function random_pcfs(g::Lcg, ::Type{T}, n, mmax) where {T}
    funcs = Tuple{Vector{T},Vector{T}}[]
    for _ in 1:n
        m = next_int!(g, mmax)
        gaps = Float64[0.05 + next_unit!(g) for _ in 1:m-1]
        values = Float64[round(10 * next_unit!(g); digits = 2) for _ in 1:m-1]
        push!(funcs, (T.(cumsum(vcat(0.0, gaps))), T.(vcat(values, 0.0))))
    end
    return funcs
end

tolerance(::Type{Float64}) = 1e-12
tolerance(::Type{Float32}) = 1e-5

# Checks `got` against `want` entry by entry, infinities exactly.
function agrees(got, want, T)
    size(got) == size(want) || return false
    for (x, y) in zip(got, want)
        if isinf(y)
            x == y || return false
        elseif !isapprox(Float64(x), y; rtol = tolerance(T), atol = tolerance(T))
            return false
        end
    end
    return true
end

# ---------------------------------------------------------------------------

@testset "Mpcf" begin

@testset "library" begin
    @test Mpcf.library_version() isa VersionNumber
    @test Mpcf.library_version().major == div(Mpcf.MPCF_HEADER_VERSION, 10000)
    @test occursin("libmpcf", Mpcf.build_info())
    @test Mpcf.has_cuda() isa Bool
    @test Mpcf.cuda_device_count() >= 0
    @test !isempty(Mpcf.library_path())
end

@testset "version compatibility rule" begin
    @test Mpcf._compatible(100, 100)       # 0.1.0 serves 0.1.0
    @test Mpcf._compatible(103, 100)       # a patch release
    @test !Mpcf._compatible(200, 100)      # 0.x minor releases may break the ABI
    @test !Mpcf._compatible(10100, 100)    # another major version
    @test Mpcf._compatible(10300, 10200)   # 1.3 serves a package written for 1.2
    @test !Mpcf._compatible(10100, 10200)  # 1.1 lacks what 1.2 added
    @test !Mpcf._compatible(20000, 10000)
end

@testset "known values" begin
    f = ([0.0, 1.0], [3.0, 0.0])
    g = ([0.0, 2.0], [1.0, 0.0])
    @test lp_distance(f, g) == 3.0                  # 2*1 + 1*1
    @test lp_distance(f, g; p = 2) ≈ sqrt(5.0)      # sqrt(4*1 + 1*1)
    @test lp_distance(f, g; p = Inf) == 2.0
    h = ([0.0, 2.0, 3.0], [10.0, 5.0, 0.0])
    k = ([0.0, 6.0], [5.0, 0.0])
    @test lp_distance(h, k) == 25.0                 # 5*2 + 0*1 + 5*3
    K = l2_kernel(PcfCollection([([0.0, 3.0], [4.0, 0.0]), ([0.0, 3.0], [2.0, 0.0])]))
    @test K == [48.0 24.0; 24.0 12.0]
    @test K isa Matrix{Float64}
    @test l2_inner_product(f, g) == 3.0             # 3*1 on [0, 1)
end

@testset "views share the breakpoints" begin
    # f1 = 3 on [0, 1), f2 = 1 on [0, 2), f3 = 10 on [0, 2) and 5 on [2, 3),
    # f4 = 4 on [1, 2): d12 = 3, d13 = 22, d23 = 23, d14 = 7, d24 = 4, d34 = 21.
    X = PcfCollection([([0.0, 1.0], [3.0, 0.0]), ([0.0, 2.0], [1.0, 0.0]),
                       ([0.0, 2.0, 3.0], [10.0, 5.0, 0.0]), ([1.0, 2.0], [4.0, 0.0])])
    V = view(X, 2:4)
    @test length(V) == 3
    @test total_breakpoints(V) == 7
    @test cdist(view(X, 1:2), view(X, 3:4)) == [22.0 7.0; 23.0 4.0]
    W = view(V, 2:3)                  # f3, f4
    finalize(X)
    finalize(V)
    @test pdist(W) == [0.0 21.0; 21.0 0.0]
    @test length(view(W, 2:1)) == 0
    @test_throws BoundsError view(W, 1:3)
    @test_throws BoundsError view(W, 0:1)
end

@testset "unbounded pieces" begin
    one_forever = ([0.0], [1.0])
    @test lp_distance(one_forever, ZERO) == Inf
    @test l2_inner_product(one_forever, one_forever) == Inf
    @test l2_inner_product(one_forever, ([0.0], [-1.0])) == -Inf
    # Equal tails: the unbounded piece has a zero integrand and adds 0.
    @test lp_distance(([0.0, 1.0], [1.0, 2.0]), ([0.0, 1.0], [0.0, 2.0])) == 1.0
    # A finite window makes it finite.
    @test lp_distance(one_forever, ZERO; window = (0.0, 2.5)) == 2.5
    @test l2_inner_product(one_forever, one_forever; window = (-1.0, 2.0)) == 2.0
end

@testset "pdist layouts" begin
    funcs = [([0.0, 1.0], [3.0, 0.0]), ([0.0, 2.0], [1.0, 0.0]), ([0.0, 3.0], [2.0, 0.0])]
    X = PcfCollection(funcs)
    d = [ref_lp(funcs[i], funcs[j], 1) for i in 1:3, j in 1:3]
    D = pdist(X)
    @test D isa Matrix{Float64}
    @test size(D) == (3, 3)
    @test D == d
    @test all(D[i, i] == 0 for i in 1:3)
    @test D == permutedims(D)
    @test pdist(X; layout = :condensed) == [d[1, 2], d[1, 3], d[2, 3]]
    @test pdist(X; layout = :packed_lower) == [d[2, 1], d[3, 1], d[3, 2]]
    kernel = [ref_kernel(funcs[i], funcs[j]) for i in 1:3, j in 1:3]
    @test l2_kernel(X; layout = :packed_lower) ==
          [kernel[1, 1], kernel[2, 1], kernel[2, 2], kernel[3, 1], kernel[3, 2], kernel[3, 3]]
    @test length(X) == 3
    @test total_breakpoints(X) == 6
end

@testset "agreement with the reference, $T" for T in (Float64, Float32)
    rng = Lcg(20240607)
    funcs = random_pcfs(rng, T, 14, 9)
    X = PcfCollection(funcs)
    @test X isa PcfCollection{T}
    n = length(funcs)
    for p in (1, 1.5, 2, Inf)
        want = [i == j ? 0.0 : ref_lp(funcs[i], funcs[j], p) for i in 1:n, j in 1:n]
        D = pdist(X; p = p, backend = :cpu)
        @test D isa Matrix{T}
        @test agrees(D, want, T)
    end
    window = (0.5, 3.7)
    want = [ref_lp(funcs[i], funcs[j], 2; window = window) for i in 1:n, j in 1:n]
    @test agrees(pdist(X; p = 2, window = window), want, T)
    @test agrees(l2_kernel(X), [ref_kernel(f, g) for f in funcs, g in funcs], T)
    @test agrees(l2_kernel(X; window = window),
                 [ref_kernel(f, g; window = window) for f in funcs, g in funcs], T)

    # cdist: rectangular, entry (i, j) = d(X[i], Y[j]).
    ys = random_pcfs(rng, T, 5, 6)
    Y = PcfCollection(ys)
    C = cdist(X, Y; p = 1)
    @test C isa Matrix{T}
    @test size(C) == (n, 5)
    @test agrees(C, [ref_lp(f, g, 1) for f in funcs, g in ys], T)
    @test agrees(cdist(Y, X; p = Inf), [ref_lp(g, f, Inf) for g in ys, f in funcs], T)
    @test agrees(l2_kernel(X, Y), [ref_kernel(f, g) for f in funcs, g in ys], T)

    norms = lp_norm(X; p = 2)
    @test norms isa Vector{T}
    @test agrees(norms, [ref_lp(f, ZERO, 2) for f in funcs], T)
    @test agrees(lp_norm(X; p = 1, window = window),
                 [ref_lp(f, ZERO, 1; window = window) for f in funcs], T)

    @test lp_distance(X, 2, Y, 3; p = 2) ≈ ref_lp(funcs[2], ys[3], 2) rtol = tolerance(T)
    @test l2_inner_product(X, 4, X, 5) ≈ ref_kernel(funcs[4], funcs[5]) rtol = tolerance(T)
end

@testset "constructors agree" begin
    t1, v1 = [0.0, 1.0, 2.5], [2.0, -1.0, 0.0]
    t2, v2 = [-1.0, 0.5], [4.0, 0.0]
    from_tuples = PcfCollection([(t1, v1), (t2, v2)])
    from_pairs = PcfCollection([t1 => v1, t2 => v2])
    from_matrices = PcfCollection([hcat(t1, v1), hcat(t2, v2)])
    from_csr = PcfCollection([0, 3, 5], vcat(t1, t2), vcat(v1, v2))
    points = permutedims(hcat(vcat(t1, t2), vcat(v1, v2)))  # 2×5, column k = (t_k, v_k)
    from_points = PcfCollection(UInt64[0, 3, 5], points)
    want = ref_lp((t1, v1), (t2, v2), 1)
    for X in (from_tuples, from_pairs, from_matrices, from_csr, from_points)
        @test X isa PcfCollection{Float64}
        @test pdist(X)[1, 2] ≈ want rtol = 1e-12
    end
    X32 = PcfCollection{Float32}([(t1, v1), (t2, v2)])
    @test X32 isa PcfCollection{Float32}
    @test pdist(X32) isa Matrix{Float32}
    @test PcfCollection([(Float32.(t1), Float32.(v1))]) isa PcfCollection{Float32}
    @test PcfCollection([([0, 1], [3, 0])]) isa PcfCollection{Float64}  # integers
    empty_collection = PcfCollection(Tuple{Vector{Float64},Vector{Float64}}[])
    @test length(empty_collection) == 0
    @test size(pdist(empty_collection)) == (0, 0)
    @test occursin("PcfCollection{Float64}(2 functions", sprint(show, from_tuples))
end

@testset "options" begin
    funcs = [([0.0, 1.0], [3.0, 0.0]), ([0.0, 2.0], [1.0, 0.0])]
    X = PcfCollection(funcs)
    opts = Mpcf.Options(; backend = :cpu, threads = 1, window = (0.0, 1.5),
                        block_hints = (split_hint = 3, min_block_side = 1))
    @test pdist(X; options = opts)[1, 2] == ref_lp(funcs[1], funcs[2], 1; window = (0.0, 1.5))
    @test_throws ArgumentError pdist(X; options = opts, threads = 2)
    @test_throws ArgumentError Mpcf.Options(; block_hints = (splits = 1,))
    @test_throws ArgumentError Mpcf.Options(; window = 3.0)
    @test_throws ArgumentError Mpcf.Options(; devices = [0.5])
end

@testset "progress" begin
    X = PcfCollection(random_pcfs(Lcg(7), Float64, 30, 20))
    calls = Tuple{Int,Int}[]
    pdist(X; progress = (done, total) -> push!(calls, (done, total)))
    @test !isempty(calls)
    @test last(calls)[1] == last(calls)[2] > 0
    @test all(c[1] <= c[2] for c in calls)
end

@testset "an interrupt while waiting cancels the task" begin
    # Big enough that one thread is still busy after the first 50 ms slice.
    X = PcfCollection(random_pcfs(Lcg(11), Float64, 3000, 120))
    seen = Tuple{Int,Int}[]
    interrupt = (done, total) -> (push!(seen, (done, total)); throw(InterruptException()))
    # Caught by hand: some versions of Test rethrow interrupts from @test_throws.
    caught = try
        pdist(X; backend = :cpu, threads = 1, progress = interrupt)
        nothing
    catch e
        e
    end
    @test caught isa InterruptException
    @test length(seen) == 1
    @test seen[1][1] < seen[1][2]  # it was interrupted while running
    # The library is still usable afterwards.
    @test pdist(PcfCollection([([0.0, 1.0], [3.0, 0.0]), ([0.0, 2.0], [1.0, 0.0])]))[1, 2] == 3.0
end

@testset "errors" begin
    good = ([0.0, 1.0], [1.0, 0.0])
    X = PcfCollection([good, good])
    # Invalid PCFs are rejected by libmpcf with a message naming the indices.
    err = try
        PcfCollection([good, ([0.0, 2.0, 1.0], [1.0, 2.0, 0.0])])
        nothing
    catch e
        e
    end
    @test err isa MpcfError
    @test err.status == Mpcf.MPCF_ERROR_INVALID_PCF
    @test err.name == "MPCF_ERROR_INVALID_PCF"
    @test occursin("breakpoint", err.msg)
    @test occursin(err.msg, sprint(showerror, err))
    @test_throws MpcfError PcfCollection([([0.0, 1.0], [NaN, 0.0])])
    @test_throws MpcfError PcfCollection([([0.0, Inf], [1.0, 0.0])])

    p_err = try
        pdist(X; p = 0.5)
        nothing
    catch e
        e
    end
    @test p_err isa MpcfError
    @test p_err.status == Mpcf.MPCF_ERROR_INVALID_ARGUMENT
    @test occursin("p = 0.5", p_err.msg)
    @test_throws MpcfError pdist(X; window = (2.0, 1.0))
    @test_throws MpcfError pdist(X; threads = -1)
    @test_throws MpcfError lp_norm(X; p = NaN)

    mismatch = try
        cdist(X, PcfCollection{Float32}([good]))
        nothing
    catch e
        e
    end
    @test mismatch isa MpcfError
    @test mismatch.status == Mpcf.MPCF_ERROR_DTYPE_MISMATCH

    if Mpcf.cuda_device_count() == 0
        cuda_err = try
            pdist(X; backend = :cuda)
            nothing
        catch e
            e
        end
        @test cuda_err isa MpcfError
        @test cuda_err.status == Mpcf.MPCF_ERROR_CUDA_UNAVAILABLE
    end

    # Argument errors caught on the Julia side, with Julia (1-based) indices.
    @test_throws ArgumentError pdist(X; layout = :triangle)
    @test_throws ArgumentError l2_kernel(X; layout = :condensed)
    @test_throws ArgumentError pdist(X; backend = :gpu)
    @test_throws ArgumentError PcfCollection([good, ([0.0, 1.0], [1.0])])
    @test_throws ArgumentError PcfCollection([good, (Float64[], Float64[])])
    @test_throws ArgumentError PcfCollection([good, "not a function"])
    @test_throws ArgumentError PcfCollection([good, zeros(2, 3)])
    @test_throws ArgumentError PcfCollection([1, 2], [0.0], [1.0])       # offsets[1] != 0
    @test_throws ArgumentError PcfCollection([0, 2, 1], [0.0, 1.0], [1.0, 0.0])
    @test_throws ArgumentError PcfCollection([0, 3], [0.0, 1.0], [1.0, 0.0])  # too short
    @test_throws ArgumentError PcfCollection(Int[], Float64[], Float64[])
    @test_throws ArgumentError PcfCollection([0, 2], zeros(3, 2))  # points must be 2×N
    @test_throws BoundsError lp_distance(X, 3, X, 1)
    @test_throws BoundsError l2_inner_product(X, 1, X, 0)
    msg = try
        PcfCollection([good, ([0.0, 1.0], [1.0])])
        ""
    catch e
        sprint(showerror, e)
    end
    @test occursin("function 2", msg)

    # A freed collection cannot be used.
    Z = PcfCollection([good])
    finalize(Z)
    @test_throws ArgumentError pdist(Z)
    @test occursin("freed", sprint(show, Z))
    finalize(Z)  # freeing twice is harmless
end

@testset "last_task_info: libmpcf's account, merge steps worked out by hand" begin
    # Before any computation in a fresh task: nothing.
    @test fetch(Threads.@spawn Mpcf.last_task_info()) === nothing
    # m = 1, 2, 4 breakpoints (B = 7): pdist's (n - 1) B = 14, l2_kernel's
    # (n + 1) B = 28; against Y (m = 3, 1; B = 4): 2 * 7 + 3 * 4 = 26;
    # lp_norm: B + n = 10 (each function against the zero function).
    X = PcfCollection([([0.0], [0.0]), ([0.0, 1.0], [1.0, 0.0]),
                       ([0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 0.0])])
    Y = PcfCollection([([0.0, 1.0, 2.0], [1.0, 2.0, 0.0]), ([0.0], [0.0])])
    @test sizeof(Mpcf.mpcf_task_info) == 296   # mpcf.h's layout on 64-bit platforms
    pdist(X; backend = :cpu, threads = 3)
    info = last_task_info()
    @test keys(info) == (:backend, :reason, :threads, :devices, :merge_steps, :seconds)
    @test (info.backend, info.reason, info.threads, info.devices) == (:cpu, "requested", 3, Int[])
    @test info.merge_steps == 14.0
    @test info.seconds >= 0.0
    l2_kernel(X; backend = :cpu, threads = 2)
    @test last_task_info().merge_steps == 28.0
    cdist(X, Y; backend = :cpu, threads = 2)
    @test last_task_info().merge_steps == 26.0
    knn(X, 1; Y = Y, backend = :cpu, threads = 2)
    @test last_task_info().merge_steps == 26.0
    lp_norm(X)
    info = last_task_info()
    @test (info.threads, info.merge_steps, info.reason) == (1, 10.0, "computed on the CPU only")
    # A call that fails leaves the last successful one's account.
    @test_throws MpcfError pdist(X; p = 0.5, backend = :cpu, threads = 2)
    @test last_task_info().merge_steps == 10.0
end

@testset "knn and kernel_matvec (values worked out by hand)" begin
    # 1, 2, 4, 1 on [0, 1): L1 distances d12 = 1, d13 = 3, d14 = 0, d23 = 2, d24 = 1, d34 = 3.
    X = PcfCollection([([0.0, 1.0], [a, 0.0]) for a in (1.0, 2.0, 4.0, 1.0)])
    d, i = knn(X, 2)
    @test i == [4 2; 1 4; 2 1; 1 2]
    @test d == [0.0 1.0; 1.0 1.0; 2.0 3.0; 0.0 1.0]
    Y = PcfCollection([([0.0, 1.0], [3.0, 0.0]), ([0.0, 1.0], [1.0, 0.0])])
    d, i = knn(X, 1; Y = Y)
    @test i == reshape([2, 1, 1, 2], 4, 1)
    @test_throws MpcfError knn(X, 4)
    # <f, g> of 1 and 3 on [0, 1): K = [1 3; 3 9], K * [1, 2] = [7, 21].
    Z = PcfCollection([([0.0, 1.0], [1.0, 0.0]), ([0.0, 1.0], [3.0, 0.0])])
    @test kernel_matvec(Z, [1.0, 2.0]) == [7.0, 21.0]
    @test kernel_matvec(Z, [1.0 0.0; 2.0 1.0]) == [7.0 3.0; 21.0 9.0]
    y = kernel_matvec(Z, [1.0, 1.0]; kernel = :laplacian, sigma = 2.0)
    @test y ≈ fill(1 + exp(-1.0), 2)
    @test_throws MpcfError kernel_matvec(Z, [1.0, 1.0]; kernel = :gaussian, sigma = 0.0)
    @test_throws DimensionMismatch kernel_matvec(Z, [1.0, 1.0, 1.0])
end

@testset "a missing library gives a clear error at load time" begin
    project = dirname(@__DIR__)
    missing_lib = joinpath(mktempdir(), "libmpcf_missing.so")
    errfile = tempname()
    env = copy(ENV)
    env["MPCF_LIBRARY"] = missing_lib
    cmd = `$(Base.julia_cmd()) --startup-file=no --project=$project -e "using Mpcf"`
    ok = success(pipeline(setenv(cmd, env); stdout = devnull, stderr = errfile))
    msg = read(errfile, String)
    @test !ok
    @test occursin("MPCF_LIBRARY", msg)
    @test occursin("libmpcf_missing.so", msg)
end

# ---------------------------------------------------------------------------
# [tda] barcodes, pointwise operations, read-out and files
# ---------------------------------------------------------------------------

# Reference summaries, literally from their definitions.
ref_betti(bars, t) = count(b -> b[1] <= t < b[2], bars)
ref_stable_rank(bars, t) = t < 0 ? 0 : count(b -> b[2] - b[1] > t, bars)

# A random barcode of dyadic numbers (every value exact), some bars infinite.
function random_barcode(g::Lcg, k)
    bars = Tuple{Float64,Float64}[]
    for _ in 1:k
        b = (next_int!(g, 64) - 33) / 8
        len = (next_int!(g, 33) - 1) / 8
        push!(bars, (b, next_unit!(g) < 0.1 ? Inf : b + len))
    end
    return bars
end

@testset "barcodes: hand-worked" begin
    bars = [0.0 2.0; 1.0 3.0; 1.0 Inf]
    @test to_list(betti_curve(bars)) == [([0.0, 1.0, 2.0, 3.0], [1.0, 3.0, 2.0, 1.0])]
    @test to_list(stable_rank(bars)) == [([0.0, 2.0], [3.0, 1.0])]
    @test to_list(accumulated_persistence(bars)) == [([1.0, 2.0], [2.0, 4.0])]
    @test to_list(betti_curve([(0.0, 2.0), (1.0, 3.0), (1.0, Inf)])) == to_list(betti_curve(bars))
    X = stable_rank([bars, zeros(0, 2), [(5.0, 5.0)]]; T = Float32)
    @test X isa PcfCollection{Float32}
    @test length(X) == 3
    @test to_list(X)[2] == (Float32[0.0], Float32[0.0])   # empty barcode: the zero function
    @test to_list(X)[3] == (Float32[0.0], Float32[0.0])   # length 0 contributes nothing
    @test pcf_evaluate(betti_curve(bars), [-1.0, 0.5, 1.0, 2.5, 1e9]) == [0.0 1.0 3.0 2.0 1.0]
end

@testset "barcodes: against the reference" begin
    g = Lcg(0x5eed)
    barcodes = [random_barcode(g, next_int!(g, 20)) for _ in 1:40]
    B = betti_curve(barcodes)
    S = stable_rank(barcodes)
    for (k, bars) in enumerate(barcodes)
        probes = sort(unique(vcat(-10.0, 100.0, [b[1] for b in bars],
                                  [b[2] for b in bars if isfinite(b[2])],
                                  [b[2] - b[1] for b in bars if isfinite(b[2])])))
        probes = vcat(probes, probes .+ 1 / 64)
        @test vec(pcf_evaluate(PcfCollection([to_list(B)[k]]), probes)) ==
              [Float64(ref_betti(bars, t)) for t in probes]
        @test vec(pcf_evaluate(PcfCollection([to_list(S)[k]]), probes)) ==
              [Float64(ref_stable_rank(bars, t)) for t in probes]
    end
end

@testset "barcodes: bad bars" begin
    msg(f) = try
        f()
        ""
    catch e
        e isa MpcfError ? e.msg : sprint(showerror, e)
    end
    @test occursin("barcode 1, bar 0", msg(() -> betti_curve([[(0.0, 1.0)], [(3.0, 2.0)]])))
    @test occursin("counts barcodes and bars from 0", msg(() -> betti_curve([(3.0, 2.0)])))
    @test occursin("NaN", msg(() -> stable_rank([(NaN, 2.0)])))
    @test occursin("infinite", msg(() -> stable_rank([(Inf, Inf)])))
    @test_throws MpcfError accumulated_persistence([(-Inf, 1.0)])
    @test_throws ArgumentError betti_curve([0.0 1.0 2.0])
    @test_throws ArgumentError betti_curve("0,1")
    @test_throws ArgumentError betti_curve([[(0.0, 1.0)], [1.0, 2.0]])
end

@testset "sum, mean, combine, evaluate" begin
    f = ([0.0, 2.0], [1.0, 0.0])
    g = ([1.0, 3.0], [3.0, 0.0])
    h = ([0.0], [3.0])
    X = PcfCollection([f, g, h])
    @test to_list(pcf_sum(X)) == [([0.0, 1.0, 2.0, 3.0], [4.0, 7.0, 6.0, 3.0])]
    @test to_list(pcf_mean([f, g])) == [([0.0, 1.0, 2.0, 3.0], [0.5, 2.0, 1.5, 0.0])]
    @test to_list(pcf_sum(PcfCollection([f, ([0.0, 2.0], [-1.0, 0.0])]))) == [([0.0], [0.0])]
    @test_throws MpcfError pcf_mean(PcfCollection(Tuple{Vector{Float64},Vector{Float64}}[]))
    C = pcf_combine(X, PcfCollection([([1.0, 2.0], [1.0, 0.0])]); a = 2, b = -1)
    @test length(C) == 3
    @test to_list(C)[1] == ([0.0, 1.0, 2.0], [2.0, 1.0, 0.0])
    @test to_list(C)[3] == ([0.0, 1.0, 2.0], [6.0, 5.0, 6.0])
    @test_throws MpcfError pcf_combine(X, PcfCollection([f, g]))
    @test_throws MpcfError pcf_combine(X, X; a = Inf)
    t = [2.5, -Inf, 0.0, 1.0, Inf]
    E = pcf_evaluate(X, t)
    @test E == [ref_value(F, x) for F in (f, g, h), x in t]
    @test E isa Matrix{Float64}
    @test pcf_evaluate(X, 1.0) == [1.0, 3.0, 3.0]
    @test_throws MpcfError pcf_evaluate(X, [0.0, NaN])
    X32 = PcfCollection{Float32}([f, g])
    @test pcf_evaluate(X32, [1.5]) == reshape(Float32[1.0, 3.0], 2, 1)
end

@testset "read-out and files" begin
    f = ([0.0, 1.0], [3.0, 0.0])
    g = ([0.5], [1.0])
    X = PcfCollection([f, g])
    offsets, times, values = breakpoints(X)
    @test offsets == UInt64[0, 2, 3]
    @test times == [0.0, 1.0, 0.5]
    @test values == [3.0, 0.0, 1.0]
    @test to_list(X) == [f, g]
    dir = mktempdir()
    for T in (Float32, Float64)
        path = joinpath(dir, "x$T.mpcf")
        pcf_save(path, PcfCollection{T}([f, g]))
        Y = pcf_load(path)
        @test Y isa PcfCollection{T}
        @test to_list(Y) == [(T.(f[1]), T.(f[2])), (T.(g[1]), T.(g[2]))]
    end
    bad = joinpath(dir, "bad.mpcf")
    write(bad, "id,t,v\na,0,1\n")
    err = try
        pcf_load(bad)
        nothing
    catch e
        e
    end
    @test err isa MpcfError && occursin("not an mpcf PCF file", err.msg)
    @test_throws MpcfError pcf_load(joinpath(dir, "missing.mpcf"))
    @test_throws MpcfError pcf_save(joinpath(dir, "no", "dir.mpcf"), X)
end

@testset "piecewise linear functions (values worked out by hand)" begin
    tent = ([0.0, 1.0, 2.0], [0.0, 1.0, 0.0])
    X = plfs([tent, ZERO, ([0.0, 2.0], [0.0, 2.0])])
    @test X isa PcfCollection{Float64}
    @test function_type(X) === :linear
    @test function_type(PcfCollection([tent])) === :constant
    @test occursin("piecewise linear", sprint(show, X))
    @test pdist(X)[1, 2] == 1.0                     # the area of the tent
    @test pdist(X; p = 2)[1, 2] ≈ sqrt(2 / 3)
    @test pdist(X; p = Inf)[1, 2] == 1.0
    @test lp_distance(tent, ZERO; type = :linear) == 1.0
    @test lp_distance(tent, ZERO; p = 2) == 1.0     # as PCFs: 1 on [1, 2), 0 elsewhere
    @test l2_inner_product(tent, tent; type = :linear) ≈ 2 / 3
    @test pcf_evaluate(X, [0.5, 1.5, 3.0]) == [0.5 0.5 0.0; 0.0 0.0 0.0; 0.5 1.5 2.0]
    @test function_type(plfs(UInt64[0, 3], [0.0, 1.0, 2.0], [0.0, 1.0, 0.0])) === :linear
    @test function_type(plfs(UInt64[0, 3], [0.0 1.0 2.0; 0.0 1.0 0.0])) === :linear
    @test plfs(Float32, [tent]) isa PcfCollection{Float32}
    @test_throws ArgumentError PcfCollection([tent]; type = :cubic)
    err = try
        cdist(X, PcfCollection([tent]))
        nothing
    catch e
        e
    end
    @test err isa MpcfError
    @test occursin("piecewise linear functions (PLFs)", err.msg)
    @test occursin("piecewise constant functions (PCFs)", err.msg)
end

@testset "landscapes, silhouettes and objects of several functions" begin
    # Barcode 1: (0, 2): λ1 = (0,0),(1,1),(2,0), λ2 = 0. Barcode 2: (0, 4),
    # (1, 3): λ1 = (0,0),(2,2),(4,0), λ2 = (1,0),(2,1),(3,0).
    barcodes = [[(0.0, 2.0)], [(0.0, 4.0), (1.0, 3.0)]]
    L = landscape(barcodes, 2)
    @test length(L) == 4
    @test function_type(L) === :linear
    @test to_list(L) == [([0.0, 1.0, 2.0], [0.0, 1.0, 0.0]), ([0.0], [0.0]),
                         ([0.0, 2.0, 4.0], [0.0, 2.0, 0.0]), ([1.0, 2.0, 3.0], [0.0, 1.0, 0.0])]
    # L1: |λ1 - λ1'| integrates to 4 - 1 = 3, λ2' to 1. L2: the λ1 difference
    # squared integrates to 4, λ2' squared to 2/3.
    @test pdist(L; components = true) == [0.0 4.0; 4.0 0.0]
    @test pdist(L; components = true, p = 2)[1, 2] ≈ sqrt(4 + 2 / 3)
    @test pdist(L; components = true, layout = :condensed) == [4.0]
    @test size(pdist(L)) == (4, 4)                  # the collection itself is unchanged
    @test pdist(L; components = 2) == pdist(L; components = true)
    @test cdist(L, L; components = true) == [0.0 4.0; 4.0 0.0]
    # ∫ λ1 λ1 = 2/3 and 16/3, ∫ λ2' λ2' = 2/3, ∫ λ1 λ1' = 1/3 + 1 - 1/3 = 1.
    @test l2_kernel(L; components = true) ≈ [2/3 1.0; 1.0 6.0]
    @test l2_kernel(L, L; components = true) ≈ [2/3 1.0; 1.0 6.0]
    d, i = knn(L, 1; components = true)
    @test d == reshape([4.0, 4.0], 2, 1)
    @test i == reshape([2, 1], 2, 1)
    @test kernel_matvec(L, [1.0, 0.0]; components = true) ≈ [2 / 3, 1.0]
    @test_throws ArgumentError pdist(L; components = 3)
    @test_throws ArgumentError pdist(L; components = 0)
    # A 1-based bar index note and clip for infinite deaths.
    err = try
        landscape([(1.0, Inf)], 1)
        nothing
    catch e
        e
    end
    @test err isa MpcfError && occursin("barcode 0, bar 0", err.msg)
    @test pcf_evaluate(landscape([(1.0, Inf)], 1; clip = 3.0), [2.0, 3.0]) == [1.0 0.0]
    @test_throws MpcfError landscape(barcodes, 0)
    @test landscape(barcodes, 1; T = Float32) isa PcfCollection{Float32}
    # Silhouette, q = 1, of (0, 2) and (0, 4): weights 2 and 4; at t = 1:
    # (2 * 1 + 4 * 1) / 6 = 1; at 2: (0 + 4 * 2) / 6 = 4/3.
    S = silhouette([(0.0, 2.0), (0.0, 4.0)])
    @test length(S) == 1
    @test function_type(S) === :linear
    @test vec(pcf_evaluate(S, [1.0, 2.0])) ≈ [1.0, 4 / 3]
    # q = 0: equal weights, (1 + 1) / 2 at 1 and (0 + 2) / 2 at 2.
    @test vec(pcf_evaluate(silhouette([(0.0, 2.0), (0.0, 4.0)]; q = 0), [1.0, 2.0])) ≈ [1.0, 1.0]
    # PLF files keep their type.
    path = joinpath(mktempdir(), "landscapes.mpcf")
    pcf_save(path, L)
    @test function_type(pcf_load(path)) === :linear
    @test to_list(pcf_load(path)) == to_list(L)
end

end # @testset "Mpcf"
