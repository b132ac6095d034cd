module github.com/rosemary-fhe/rosemary

go 1.24
